// Taxpayers (entities): list with live credential status, add, edit name/CIEC, upload or
// remove the e.firma; each one's own entry on the SAT's 69-B list and its counterparties
// on it.
import { t, lang, tf } from './i18n.js';
import { api, withQuery } from './api.js';
import { h, badge, field, select, table, errorBox, flash, values, confirmBox } from './dom.js';
import { money, timestamp } from './format.js';
import { tone, situationBadge, publications } from './list_69b.js';

const POLL_MS = 3000;

/** Every entity of the organization (following next_cursor), for lists and pickers. */
export async function allEntities() {
  const out = [];
  let cursor = '';
  do {
    const page = await api('GET', `/v1/entities?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

/** The `[value, text]` options of an entity picker. */
export function entityOptions(list, anyLabel) {
  const opts = list.map((e) => [e.id, `${e.tax_id} · ${e.name}`]);
  return anyLabel ? [['', anyLabel], ...opts] : opts;
}

function base64(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ''));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(file);
  });
}

function efirmaSummary(e) {
  if (!e.efirma) return h('p', { class: 'muted', tabindex: '-1' }, t('no_efirma'));
  const f = e.efirma;
  const when = (v) => `${timestamp(v, lang())} (${t('mx_time')})`;
  return h('dl', { class: 'props' },
    h('dt', null, t('status')), h('dd', null, badge(f.status)),
    h('dt', null, t('serial')), h('dd', null, f.serial_number),
    h('dt', null, t('rfc')), h('dd', null, f.rfc),
    h('dt', null, t('holder')), h('dd', null, f.holder_name),
    h('dt', null, t('issuer_name')), h('dd', null, f.issuer),
    h('dt', null, t('valid_from')), h('dd', null, when(f.valid_from)),
    h('dt', null, t('valid_to')), h('dd', null, when(f.valid_to)));
}

/** The entity's own entry on the 69-B list loaded last (`list_69b`), or that it has none. */
function ownEntry(e) {
  const l = e.list_69b;
  if (!l) return h('p', { class: 'muted', id: 'entity-69b' }, tf('l69b_entity_not_listed', { rfc: e.tax_id }));
  return h('div', { class: tone(l.situation), id: 'entity-69b', role: 'note' },
    h('p', null, h('strong', null, tf('l69b_entity_listed', { rfc: l.tax_id, name: l.name, situation: t(`l69b_${l.situation}`) }))),
    publications(l),
    h('p', { class: 'muted' }, tf('l69b_version', { version: l.list_version })));
}

/** A flagged counterparty's sums per direction and currency, amounts as the API wrote them. */
function totalsList(totals) {
  if (!totals.length) return '—';
  return h('ul', { class: 'plain' }, totals.map((x) => h('li', null, tf('l69b_total_line', {
    direction: t(x.direction), currency: x.currency || '—', count: x.count,
    subtotal: money(x.subtotal, x.currency), total: money(x.total, x.currency),
  }))));
}

/** GET /v1/entities/{id}/counterparties-69b as a table, one row per counterparty. */
function counterpartiesTable(list) {
  if (!list.length) return h('p', { class: 'muted' }, t('l69b_none'));
  return table(
    [[t('rfc')], [t('name')], [t('l69b_situation')], [t('invoices'), 'num'], [t('l69b_totals')]],
    list.map((c) => h('tr', { 'data-counterparty': c.tax_id },
      h('td', null, c.tax_id), h('td', { class: 'user' }, c.name),
      h('td', null, situationBadge(c.situation), publications(c)),
      h('td', { class: 'num' }, h('span', { class: 'invoices' }, c.invoices),
        c.cancelled_invoices !== '0' ? h('div', { class: 'muted' }, tf('l69b_cancelled_n', { n: c.cancelled_invoices })) : null),
      h('td', null, totalsList(c.totals)))),
    t('l69b_counterparties'));
}

export function render(main) {
  const rows = h('div', { 'aria-live': 'polite' });
  const panel = h('div');
  const addForm = h('form', { class: 'grid', id: 'add-entity' },
    field(t('rfc'), { name: 'tax_id', required: true, autocomplete: 'off', maxlength: 13 }),
    field(t('name'), { name: 'name', required: true }),
    field(t('ciec'), { name: 'ciec_password', type: 'password', required: true, autocomplete: 'off' }),
    h('div', null, h('button', { type: 'submit' }, t('add'))));
  const addErr = h('div');
  main.replaceChildren(h('h1', null, t('entities')),
    h('section', { 'aria-labelledby': 'add-h' }, h('h2', { id: 'add-h' }, t('add_entity')), addErr, addForm),
    panel, h('h2', null, t('entities')), h('p', { class: 'muted' }, t('live_hint')), rows);

  let list = [];
  let drawn = '';
  const draw = () => {
    // Polling redraws only on a change, and keeps the keyboard focus on the same control.
    const now = JSON.stringify(list);
    if (now === drawn) return;
    drawn = now;
    const focused = rows.contains(document.activeElement) ? document.activeElement.getAttribute('aria-label') : null;
    rows.replaceChildren(table(
      [[t('rfc')], [t('name')], [t('credential')], [t('efirma')], [t('l69b_list')], [t('actions')]],
      list.map((e) => h('tr', { 'data-entity': e.id },
        h('td', null, e.tax_id), h('td', { class: 'user' }, e.name),
        h('td', { class: 'credential' }, badge(e.credential_status)),
        h('td', { class: 'efirma' }, e.efirma ? badge(e.efirma.status) : t('no_efirma')),
        h('td', { class: 'list_69b' }, e.list_69b ? situationBadge(e.list_69b.situation) : '—'),
        h('td', null, h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'secondary', 'aria-label': `${t('edit')} ${e.tax_id}`, onclick: () => edit(e) }, t('edit')),
          h('button', { type: 'button', class: 'secondary', 'aria-label': `${t('efirma')} ${e.tax_id}`, onclick: () => efirma(e) }, t('efirma')),
          h('button', { type: 'button', class: 'secondary', 'aria-label': `${t('l69b_list')} ${e.tax_id}`, onclick: () => list69b(e.id) }, t('l69b_list')),
          h('a', { href: `#/extractions/${e.id}`, class: 'button', 'aria-label': `${t('new_extraction')} ${e.tax_id}` }, t('new_extraction')))))),
    ));
    if (focused) {
      const again = [...rows.querySelectorAll('[aria-label]')].find((el) => el.getAttribute('aria-label') === focused);
      if (again) again.focus();
    }
  };
  const load = async () => {
    try {
      list = await allEntities();
      draw();
    } catch (e) {
      if (e.status !== 401) rows.replaceChildren(errorBox(e));
    }
  };

  addForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    addErr.replaceChildren();
    try {
      const v = values(addForm);
      await api('POST', '/v1/entities', { tax_id: v.tax_id.toUpperCase(), name: v.name, ciec_password: addForm.ciec_password.value });
      addForm.reset();
      flash(t('created'));
      await load();
    } catch (e) { addErr.replaceChildren(errorBox(e)); }
  });

  function closePanel() { panel.replaceChildren(); }

  function edit(e) {
    const err = h('div');
    const form = h('form', { class: 'grid' },
      field(t('name'), { name: 'name', value: e.name, required: true }),
      field(t('ciec_new'), { name: 'ciec_password', type: 'password', autocomplete: 'off' }),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('save')),
        h('button', { type: 'button', class: 'secondary', onclick: closePanel }, t('cancel'))));
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const body = { name: form.name.value.trim() };
      if (form.ciec_password.value) body.ciec_password = form.ciec_password.value;
      try {
        await api('PATCH', `/v1/entities/${e.id}`, body);
        flash(t('saved'));
        closePanel();
        await load();
      } catch (x) { err.replaceChildren(errorBox(x)); }
    });
    panel.replaceChildren(h('section', { class: 'panel', 'aria-labelledby': 'edit-h' },
      h('h2', { id: 'edit-h' }, `${t('edit_entity')}: ${e.tax_id}`), err, form));
    form.name.focus();
  }

  function efirma(e) {
    const err = h('div');
    const form = h('form', { class: 'grid' },
      field(t('cer_file'), { name: 'cer', type: 'file', accept: '.cer', required: true }),
      field(t('key_file'), { name: 'key', type: 'file', accept: '.key', required: true }),
      field(t('key_password'), { name: 'password', type: 'password', autocomplete: 'off', required: true }),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('upload')),
        h('button', { type: 'button', class: 'secondary', onclick: closePanel }, t('cancel'))));
    const summary = h('div');
    const confirmSlot = h('div');
    // The summary, and a remove action while there is an e.firma to remove.
    const show = (ef) => {
      confirmSlot.replaceChildren();
      const remove = ef ? h('button', {
        type: 'button', class: 'danger', id: 'remove-efirma', 'aria-label': `${t('remove_efirma')} ${e.tax_id}`,
        onclick: () => confirmBox(confirmSlot, tf('confirm_remove_efirma', { rfc: e.tax_id }), t('remove_efirma'), async () => {
          err.replaceChildren();
          try {
            await api('DELETE', `/v1/entities/${e.id}/efirma`);
            flash(t('efirma_removed'));
            show(null);
            await load();
            summary.querySelector('p').focus();
          } catch (x) { err.replaceChildren(errorBox(x)); }
        }),
      }, t('remove_efirma')) : null;
      summary.replaceChildren(efirmaSummary({ efirma: ef }), remove, confirmSlot);
    };
    show(e.efirma);
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      err.replaceChildren();
      try {
        const updated = await api('PUT', `/v1/entities/${e.id}/efirma`, {
          certificate: await base64(form.cer.files[0]),
          private_key: await base64(form.key.files[0]),
          password: form.password.value,
        });
        form.reset();
        flash(t('saved'));
        show(updated.efirma);
        await load();
      } catch (x) { err.replaceChildren(errorBox(x)); }
    });
    panel.replaceChildren(h('section', { class: 'panel', 'aria-labelledby': 'ef-h' },
      h('h2', { id: 'ef-h' }, `${t('upload_efirma')}: ${e.tax_id}`), summary, err, form));
    form.cer.focus();
  }

  // The entity's own entry and its flagged counterparties, filtered by situation. The
  // entity is read afresh: the row's copy may predate a list loaded since.
  function list69b(id) {
    const opener = document.activeElement;
    const close = () => {
      closePanel();
      if (opener && opener.isConnected) opener.focus();
    };
    const err = h('div');
    const own = h('div');
    const found = h('div', { 'aria-live': 'polite' });
    const heading = h('h2', { id: 'l69b-h', tabindex: '-1' }, t('l69b_counterparties'));
    const form = h('form', { class: 'grid', id: 'counterparties-69b-form' },
      select(t('l69b_situation'), 'situation', [['', t('any')],
        ...['presumed', 'definitive', 'disproved', 'favorable_ruling'].map((v) => [v, t(`l69b_${v}`)])], ''),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('filter')),
        h('button', { type: 'button', class: 'secondary', onclick: close }, t('close'))));
    const show = async () => {
      err.replaceChildren();
      try {
        const [e, flagged] = await Promise.all([api('GET', `/v1/entities/${id}`),
          api('GET', withQuery(`/v1/entities/${id}/counterparties-69b`, values(form)))]);
        heading.textContent = `${t('l69b_counterparties')}: ${e.tax_id}`;
        own.replaceChildren(ownEntry(e));
        found.replaceChildren(counterpartiesTable(flagged.data));
      } catch (x) { if (x.status !== 401) err.replaceChildren(errorBox(x)); }
    };
    form.addEventListener('submit', (ev) => { ev.preventDefault(); show(); });
    panel.replaceChildren(h('section', { class: 'panel', id: 'entity-69b-panel', 'aria-labelledby': 'l69b-h' },
      heading, own, h('p', { class: 'muted' }, t('l69b_counterparties_hint')), err, form, found));
    heading.focus();
    show();
  }

  load();
  const timer = setInterval(load, POLL_MS);
  return () => clearInterval(timer);
}
