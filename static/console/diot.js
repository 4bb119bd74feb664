// The month's DIOT on the month-close page (GET /v1/entities/{id}/diot, /docs/diot):
// one row per supplier with its codes described and its amounts in pesos, each
// supplier's settings editable in place (PUT and DELETE /v1/entities/{id}/suppliers/
// {rfc}), and the batch TXT and review XLSX to download. Amounts stay the strings the
// API wrote (format.js).
import { t } from './i18n.js';
import { api, withQuery } from './api.js';
import { h, field, select, table, errorBox, values, downloadButton, flash } from './dom.js';
import { money } from './format.js';

const code = (c) => (c ? `${c.code} - ${c.description || ''}` : '—');

/** The DIOT's code lists, asked once. */
let codes = null;
async function diotCodes() {
  codes = codes || await api('GET', '/v1/diot/codes');
  return codes;
}

/** A select whose first option is "the default" (an empty value, sent as null). */
function choice(label, name, options, value) {
  return select(label, name, [['', t('diot_default')], ...options], value ?? '');
}

/** The editor of one supplier's settings, below the table; `reload` redraws the DIOT. */
async function editor(slot, path, record, reload) {
  const url = `${path}/suppliers/${encodeURIComponent(record.tax_id)}`;
  let saved;
  try {
    await diotCodes();
    // None saved: every field at its default.
    saved = await api('GET', url).catch((e) => {
      if (e.status === 404) return {};
      throw e;
    });
  } catch (e) {
    if (e.status !== 401) slot.replaceChildren(errorBox(e));
    return;
  }
  const described = (list) => list.map((c) => [c.code, `${c.code} - ${c.description}`]);
  const err = h('div');
  const bool = saved.tax_effects === true ? 'true' : saved.tax_effects === false ? 'false' : '';
  const form = h('form', { class: 'grid', id: 'diot-supplier-form', 'aria-labelledby': 'diot-supplier-h' },
    choice(t('diot_third_party_type'), 'third_party_type', described(codes.third_party_types), saved.third_party_type),
    choice(t('diot_operation_type'), 'operation_type', described(codes.operation_types), saved.operation_type),
    choice(t('diot_tax_effects'), 'tax_effects', [['true', t('diot_effects_yes')], ['false', t('diot_effects_no')]], bool),
    choice(t('diot_border_region'), 'border_region', described(codes.border_regions), saved.border_region),
    choice(t('diot_non_creditable'), 'non_creditable', described(codes.non_creditable_reasons), saved.non_creditable),
    field(t('diot_foreign_tax_id'), { name: 'foreign_tax_id', value: saved.foreign_tax_id || '', maxlength: 40 }),
    field(t('diot_foreign_name'), { name: 'foreign_name', value: saved.foreign_name || '', maxlength: 300 }),
    field(t('diot_country'), { name: 'country', value: saved.country || '', maxlength: 3, placeholder: 'USA' }),
    field(t('diot_jurisdiction'), { name: 'jurisdiction', value: saved.jurisdiction || '', maxlength: 300 }),
    field(t('diot_legacy_country'), { name: 'legacy_country', value: saved.legacy_country || '', maxlength: 2 }),
    field(t('diot_legacy_nationality'), { name: 'legacy_nationality', value: saved.legacy_nationality || '', maxlength: 40 }),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'diot-supplier-save' }, t('diot_save')),
      h('button', { type: 'button', class: 'secondary', id: 'diot-supplier-reset', onclick: async () => {
        try {
          await api('DELETE', url);
          flash(t('diot_reset_done'));
          reload();
        } catch (e) { if (e.status === 404) reload(); else if (e.status !== 401) err.replaceChildren(errorBox(e)); }
      } }, t('diot_reset')),
      h('button', { type: 'button', class: 'secondary', onclick: () => slot.replaceChildren() }, t('cancel'))));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = {};
    Object.entries(values(form)).forEach(([k, v]) => { body[k] = v === '' ? null : v; });
    if (body.tax_effects !== null) body.tax_effects = body.tax_effects === 'true';
    try {
      await api('PUT', url, body);
      flash(t('diot_saved'));
      reload();
    } catch (e) { if (e.status !== 401) err.replaceChildren(errorBox(e)); }
  });
  slot.replaceChildren(h('section', { id: 'diot-supplier', 'aria-labelledby': 'diot-supplier-h' },
    h('h3', { id: 'diot-supplier-h' }, `${t('diot_settings_of')} ${record.tax_id}`),
    h('p', { class: 'muted' }, t('diot_settings_hint')), err, form));
  form.querySelector('select').focus();
}

/** A row's button to its supplier's settings; its accessible name starts with its text. */
function editButton(r, edit) {
  const text = r.saved ? t('diot_edit') : t('diot_configure');
  return h('button', { type: 'button', class: 'secondary', 'data-edit': r.tax_id, 'aria-label': `${text} ${r.tax_id}`,
    onclick: () => edit(r) }, text);
}

function records(list, edit) {
  if (!list.length) return h('p', { class: 'muted' }, t('diot_empty'));
  return table(
    [[t('rfc')], [t('name')], [t('diot_third_party_type')], [t('diot_operation_type')], [t('diot_tax_effects')],
      [t('diot_non_creditable')], [t('diot_paid_16'), 'num'], [t('diot_iva_16'), 'num'], [t('diot_paid_8'), 'num'],
      [t('diot_iva_8'), 'num'], [t('diot_withheld'), 'num'], [t('diot_notes')], [t('diot_settings')]],
    list.map((r) => h('tr', { 'data-supplier': r.tax_id },
      h('td', null, r.tax_id, r.definitive_69b ? h('div', null, h('strong', null, t('diot_definitive'))) : null),
      h('td', { class: 'user' }, r.foreign_name || r.name || '—'),
      h('td', null, code(r.third_party_type)), h('td', null, code(r.operation_type)), h('td', null, code(r.tax_effects)),
      h('td', null, r.non_creditable ? r.non_creditable.description : t('diot_creditable')),
      h('td', { class: 'num' }, money(r.amounts.general.paid, null)), h('td', { class: 'num' }, money(r.amounts.general.iva, null)),
      h('td', { class: 'num' }, money(r.amounts.border.paid, null)), h('td', { class: 'num' }, money(r.amounts.border.iva, null)),
      h('td', { class: 'num' }, money(r.amounts.withheld, null)),
      h('td', null, r.notes.length ? r.notes.join(' ') : '—'),
      h('td', null, editButton(r, edit)))),
    t('diot_h'));
}

/** The DIOT section of `entityId`'s `month`, loading itself. */
export function diotSection(entityId, month) {
  const path = `/v1/entities/${encodeURIComponent(entityId)}`;
  const body = h('div', { 'aria-live': 'polite' }, h('p', { class: 'muted' }, t('loading')));
  const slot = h('div');
  const err = h('div');
  const file = (format) => () => ({ url: withQuery(`${path}/diot`, { month, format }), name: `diot-${month}.${format}` });
  const load = async () => {
    try {
      const d = await api('GET', withQuery(`${path}/diot`, { month }));
      const edit = (r) => editor(slot, path, r, () => { slot.replaceChildren(); load(); });
      body.replaceChildren(
        h('p', null, `${t('diot_layout')}: ${d.layout} ${t('diot_fields')}`),
        records(d.records, edit),
        d.excluded.length ? h('p', { class: 'muted', id: 'diot-excluded' }, `${t('diot_excluded')}: ${d.excluded.length}`) : null);
    } catch (e) {
      if (e.status !== 401) body.replaceChildren(errorBox(e));
    }
  };
  load();
  return h('section', { id: 'month-diot', 'aria-labelledby': 'month-diot-h' },
    h('h2', { id: 'month-diot-h' }, t('diot_h')),
    h('p', { class: 'muted' }, t('diot_hint')),
    h('div', { class: 'actions' },
      downloadButton('diot-txt', t('diot_txt'), file('txt'), err),
      downloadButton('diot-xlsx', t('diot_xlsx'), file('xlsx'), err)),
    err, body, slot);
}
