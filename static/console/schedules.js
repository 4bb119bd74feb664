// Schedules: keep a taxpayer in sync with extractions the service starts by itself
// (/docs/schedules). Create and edit (daily at a Mexico City time, every interval, or
// monthly on a day extracting whole calendar months), pause, resume, delete.
import { t, lang } from './i18n.js';
import { api } from './api.js';
import { h, badge, field, select, table, errorBox, flash, confirmBox } from './dom.js';
import { timestamp } from './format.js';
import { allEntities, entityOptions } from './entities.js';

const DIRECTIONS = ['issued', 'received'];
const CLASSES = ['invoices', 'retentions'];

function radio(name, value, label, checked) {
  return h('label', { class: 'check' }, h('input', { type: 'radio', name, value, checked }), label);
}

const checked = (form, name) => [...form.querySelectorAll(`input[name=${name}]:checked`)].map((i) => i.value);

/** The request body of the form: exactly one of `daily_at`, `every` and `monthly`, as the
 * API asks; `lookback_days` only for the first two (a monthly run extracts whole months). */
function body(form) {
  const out = { directions: checked(form, 'directions'), document_classes: checked(form, 'document_classes') };
  const timing = form.timing.value;
  if (timing === 'monthly') {
    out.monthly = { day: Number(form.monthly_day.value), at: form.monthly_at.value, months_before: Number(form.months_before.value) };
  } else {
    out.lookback_days = Number(form.lookback_days.value);
    if (timing === 'every') out.every = form.every.value.trim();
    else out.daily_at = form.daily_at.value;
  }
  return out;
}

/** What an edit changes: the body's fields whose value differs from the schedule's. An
 * unchanged timing is left out, since sending `every` again starts its interval anew. */
function changes(out, s) {
  const was = { ...s, document_classes: s.document_classes || ['invoices'] };
  return Object.fromEntries(Object.entries(out).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(was[k])));
}

/** How often the schedule runs, in words. */
function frequency(s) {
  if (s.monthly) return t('monthly_desc').replace('{day}', s.monthly.day).replace('{at}', s.monthly.at) + ` (${t('mx_time')})`;
  return s.daily_at ? `${t('daily_at')} ${s.daily_at} (${t('mx_time')})` : `${t('every')} ${s.every}`;
}

/** What each run extracts: the last days, or the previous calendar month(s). */
function span(s) {
  if (!s.monthly) return t('last_days').replace('{n}', s.lookback_days);
  const n = s.monthly.months_before;
  return n === 0 ? t('previous_month') : t('previous_months').replace('{n}', n);
}

export function render(main) {
  const err = h('div');
  const rows = h('div', { 'aria-live': 'polite' });
  const formSlot = h('div');
  const confirmSlot = h('div');
  main.replaceChildren(h('h1', null, t('schedules')), h('p', { class: 'muted' }, t('schedules_hint')),
    h('section', { 'aria-labelledby': 'sch-add' }, h('h2', { id: 'sch-add' }, t('add_schedule')), err, formSlot),
    h('h2', null, t('schedules')), confirmSlot, rows);

  let names = new Map();
  let edit = () => {};
  const when = (v) => timestamp(v, lang());
  const act = async (call, message) => {
    err.replaceChildren();
    try { await call(); flash(message); await load(); } catch (e) { if (e.status !== 401) err.replaceChildren(errorBox(e)); }
  };
  const load = async () => {
    try {
      const page = await api('GET', '/v1/schedules?limit=100');
      rows.replaceChildren(page.data.length === 0 ? h('p', null, t('no_results')) : table(
        [[t('entity')], [t('frequency')], [t('directions')], [t('document_classes')], [t('extracts')], [t('status')],
          [`${t('next_run')} (${t('mx_time')})`], [`${t('last_run')} (${t('mx_time')})`], [t('actions')]],
        page.data.map((s) => {
          const who = names.get(s.entity_id) || s.entity_id;
          const paused = s.status === 'paused';
          return h('tr', { 'data-schedule': s.id },
            h('td', { class: 'user' }, who),
            h('td', null, frequency(s)),
            h('td', null, s.directions.map((d) => t(d)).join(', ')),
            h('td', null, (s.document_classes || ['invoices']).map((c) => t(c)).join(', ')),
            h('td', null, span(s)),
            h('td', null, badge(s.status), s.paused_reason ? h('div', { class: 'muted' }, t(`paused_${s.paused_reason}`)) : null),
            h('td', null, when(s.next_run_at)), h('td', null, when(s.last_run_at)),
            h('td', null, h('div', { class: 'actions' },
              h('button', {
                type: 'button', class: 'secondary', 'aria-label': `${t('edit')} ${who}`,
                onclick: () => edit(s),
              }, t('edit')),
              h('button', {
                type: 'button', class: 'secondary', 'aria-label': `${t(paused ? 'resume' : 'pause')} ${who}`,
                onclick: () => act(() => api('PATCH', `/v1/schedules/${s.id}`, { status: paused ? 'active' : 'paused' }), t('saved')),
              }, t(paused ? 'resume' : 'pause')),
              h('button', {
                type: 'button', class: 'danger', 'aria-label': `${t('delete')} ${who}`,
                onclick: () => confirmBox(confirmSlot, t('confirm_delete_schedule').replace('{entity}', who), t('delete'),
                  () => act(() => api('DELETE', `/v1/schedules/${s.id}`), t('deleted'))),
              }, t('delete')))));
        })));
    } catch (e) { if (e.status !== 401) rows.replaceChildren(errorBox(e)); }
  };

  (async () => {
    try {
      const list = await allEntities();
      names = new Map(list.map((e) => [e.id, `${e.tax_id} · ${e.name}`]));
      const submit = h('button', { type: 'submit' }, t('add'));
      const cancel = h('button', { type: 'button', class: 'secondary', hidden: true }, t('cancel'));
      const form = h('form', { class: 'grid', id: 'new-schedule' },
        select(t('entity'), 'entity_id', entityOptions(list)),
        h('fieldset', { class: 'timing' }, h('legend', null, t('frequency')),
          h('div', null, radio('timing', 'daily', t('daily'), true),
            field(`${t('daily_at')} (${t('mx_time')})`, { name: 'daily_at', type: 'time', value: '07:00' })),
          h('div', null, radio('timing', 'every', t('interval'), false),
            field(t('every_hint'), { name: 'every', autocomplete: 'off', placeholder: '6h', disabled: true })),
          h('div', null, radio('timing', 'monthly', t('monthly'), false),
            field(t('monthly_day'), { name: 'monthly_day', type: 'number', min: 1, max: 31, value: 1, disabled: true }),
            field(`${t('monthly_at')} (${t('mx_time')})`, { name: 'monthly_at', type: 'time', value: '06:00', disabled: true }),
            field(t('months_before'), { name: 'months_before', type: 'number', min: 0, max: 11, value: 0, disabled: true }),
            h('p', { class: 'muted' }, t('monthly_hint')))),
        h('fieldset', null, h('legend', null, t('directions')),
          DIRECTIONS.map((d) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'directions', value: d, checked: true }), t(d)))),
        h('fieldset', null, h('legend', null, t('document_classes')),
          CLASSES.map((c) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'document_classes', value: c, checked: c === 'invoices' }), t(c))),
          h('p', { class: 'muted' }, t('retentions_need_efirma'))),
        field(t('lookback_days'), { name: 'lookback_days', type: 'number', min: 1, max: 2190, value: 7, required: true }),
        h('div', { class: 'actions' }, submit, cancel));
      // Only the chosen kind's fields are enabled: the API takes exactly one timing, and
      // a monthly schedule extracts whole months rather than a number of days.
      const sync = () => {
        const timing = form.timing.value;
        form.daily_at.disabled = timing !== 'daily';
        form.every.disabled = timing !== 'every';
        for (const name of ['monthly_day', 'monthly_at', 'months_before']) form[name].disabled = timing !== 'monthly';
        form.lookback_days.disabled = timing === 'monthly';
      };
      form.addEventListener('change', sync);
      let editing = null;
      const reset = () => {
        editing = null;
        form.reset();
        form.entity_id.disabled = false;
        submit.textContent = t('add');
        cancel.hidden = true;
        sync();
      };
      // Editing fills the form with the schedule; saving PATCHes it (its entity stays).
      edit = (s) => {
        editing = s;
        form.entity_id.value = s.entity_id;
        form.entity_id.disabled = true;
        const timing = s.monthly ? 'monthly' : s.daily_at ? 'daily' : 'every';
        form.querySelector(`input[name=timing][value=${timing}]`).checked = true;
        if (s.daily_at) form.daily_at.value = s.daily_at;
        if (s.every) form.every.value = s.every;
        if (s.monthly) {
          form.monthly_day.value = s.monthly.day;
          form.monthly_at.value = s.monthly.at;
          form.months_before.value = s.monthly.months_before;
        }
        if (s.lookback_days) form.lookback_days.value = s.lookback_days;
        const classes = s.document_classes || ['invoices'];
        for (const i of form.querySelectorAll('input[name=directions]')) i.checked = s.directions.includes(i.value);
        for (const i of form.querySelectorAll('input[name=document_classes]')) i.checked = classes.includes(i.value);
        submit.textContent = t('save');
        cancel.hidden = false;
        sync();
        form.scrollIntoView({ block: 'nearest' });
      };
      cancel.addEventListener('click', reset);
      form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        const s = editing;
        if (s) {
          act(async () => {
            const changed = changes(body(form), s);
            if (Object.keys(changed).length) await api('PATCH', `/v1/schedules/${s.id}`, changed);
            reset();
          }, t('saved'));
        }
        else act(() => api('POST', '/v1/schedules', { entity_id: form.entity_id.value, ...body(form) }), t('created'));
      });
      formSlot.replaceChildren(form);
      await load();
    } catch (e) { if (e.status !== 401) err.replaceChildren(errorBox(e)); }
  })();
  return null;
}
