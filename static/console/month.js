// The month close of one taxpayer: the extractions that cover the month and their
// state, then the month's IVA determination (GET /v1/entities/{id}/iva,
// /docs/summary#iva): the figures in pesos, each side's cash-basis lines and what was
// left out with its reason; the same figures download as the API's XLSX. Then the
// month's DIOT (diot.js). Amounts stay the strings the API wrote (format.js).
import { t, lang } from './i18n.js';
import { api, withQuery } from './api.js';
import { h, field, select, table, errorBox, values, badge, downloadButton } from './dom.js';
import { allEntities, entityOptions } from './entities.js';
import { money, timestamp } from './format.js';
import { diotSection } from './diot.js';

// The choice survives a visit to another page, like the summary's.
const state = { params: null };

/** The month before today's, as YYYY-MM (the monthly return's). */
function lastMonth() {
  const now = new Date();
  return new Date(Date.UTC(now.getFullYear(), now.getMonth() - 1, 1)).toISOString().slice(0, 7);
}

/** The month's first and last day. */
function bounds(month) {
  const [y, m] = month.split('-').map(Number);
  const last = new Date(Date.UTC(y, m, 0)).toISOString().slice(0, 10);
  return [`${month}-01`, last];
}

/** An API word in the console's language (the summary's words), else as written. */
function word(prefix, value) {
  if (value === null || value === undefined) return '—';
  const text = t(`${prefix}${value}`);
  return text === `${prefix}${value}` ? value : text;
}

/** The extractions (either class, any channel) whose period touches the month. */
async function extractionsOf(entity, month) {
  const [from, to] = bounds(month);
  const page = await api('GET', withQuery('/v1/extractions', { entity_id: entity, limit: 100 }));
  return page.data.filter((x) => x.options.period.from <= to && x.options.period.to >= from);
}

function extractionsSection(list) {
  const heading = h('h2', { id: 'month-extractions-h' }, t('month_extractions'));
  const body = list.length === 0 ? h('p', { class: 'muted' }, t('month_no_extractions'))
    : table([[t('period')], [t('download_type')], [t('status')], [t('found'), 'num'], [t('processed'), 'num'], [t('finished_at')]],
      list.map((x) => h('tr', { 'data-extraction': x.id },
        h('td', null, `${x.options.period.from} – ${x.options.period.to}`),
        h('td', null, t(x.options.download_type), x.options.document_class === 'retentions' ? h('div', { class: 'muted' }, t('retentions')) : null),
        h('td', null, badge(x.status)),
        h('td', { class: 'num' }, x.invoices_found), h('td', { class: 'num' }, x.invoices_processed),
        h('td', null, timestamp(x.finished_at, lang())))));
  return h('section', { id: 'month-extractions', 'aria-labelledby': 'month-extractions-h' }, heading, body);
}

/** The figures: causado, retenido, acreditable, the result a cargo or a favor. */
function figures(f) {
  const rows = [
    ['iva_iva_collected', f.iva_collected], ['iva_iva_withheld_by_clients', f.iva_withheld_by_clients],
    ['iva_iva_creditable', f.iva_creditable], ['iva_balance', f.balance],
  ];
  return h('dl', { class: 'props', id: 'iva-figures' },
    ...rows.flatMap(([key, v]) => [h('dt', null, t(key)), h('dd', { class: 'num' }, money(v, null))]),
    h('dt', null, t('iva_result')), h('dd', null, h('strong', null, t(`iva_result_${f.result}`))),
    h('dt', null, t('iva_iva_withheld_from_others')), h('dd', { class: 'num' }, money(f.iva_withheld_from_others, null)),
    h('dt', null, t('iva_total_to_pay')), h('dd', { class: 'num' }, h('strong', null, money(f.total_to_pay, null))));
}

/** One side's cash-basis IVA lines. */
function lines(id, title, list) {
  const heading = h('h3', { id: `${id}-h` }, title);
  if (!list.length) return h('section', { id, 'aria-labelledby': `${id}-h` }, heading, h('p', { class: 'muted' }, t('summary_empty')));
  return h('section', { id, 'aria-labelledby': `${id}-h` }, heading, table(
    [[t('sum_source')], [t('sum_kind')], [t('sum_rate'), 'num'], [t('sum_currency')], [t('sum_base'), 'num'], [t('sum_amount'), 'num'],
      [t('sum_count'), 'num'], [t('sum_base_mxn'), 'num'], [t('sum_amount_mxn'), 'num']],
    list.map((l) => h('tr', null,
      h('td', null, word('sumv_', l.source)), h('td', null, word('sumv_', l.kind)), h('td', { class: 'num' }, l.rate ?? '—'),
      h('td', null, l.currency || '—'), h('td', { class: 'num' }, money(l.base, l.currency)), h('td', { class: 'num' }, money(l.amount, l.currency)),
      h('td', { class: 'num' }, l.count ?? '—'), h('td', { class: 'num' }, money(l.base_mxn, null)), h('td', { class: 'num' }, money(l.amount_mxn, null))))));
}

/** What the determination left out, each with its reason. */
function excluded(list) {
  const heading = h('h3', { id: 'iva-excluded-h' }, t('iva_excluded'));
  if (!list.length) return h('section', { id: 'iva-excluded', 'aria-labelledby': 'iva-excluded-h' }, heading, h('p', { class: 'muted' }, t('iva_excluded_none')));
  return h('section', { id: 'iva-excluded', 'aria-labelledby': 'iva-excluded-h' }, heading, table(
    [[t('iva_side')], [t('iva_reason')], [t('iva_origin')], ['UUID'], [t('rfc')], [t('name')], [t('sum_currency')],
      [t('iva_transferred'), 'num'], [t('iva_withheld'), 'num'], [t('iva_transferred_mxn'), 'num']],
    list.map((x) => h('tr', { 'data-reason': x.reason },
      h('td', null, t(x.side)),
      h('td', null, word('iva_why_', x.reason), x.detail ? h('div', { class: 'muted' }, word('sumv_', x.detail)) : null),
      h('td', null, word('iva_origin_', x.origin)),
      h('td', null, x.uuid, x.related_uuid ? h('div', { class: 'muted' }, `${t('iva_paid_uuid')}: ${x.related_uuid}`) : null),
      h('td', null, x.counterparty_tax_id || '—'), h('td', { class: 'user' }, x.counterparty_name || '—'), h('td', null, x.currency || '—'),
      h('td', { class: 'num' }, money(x.iva_transferred, x.currency)), h('td', { class: 'num' }, money(x.iva_withheld, x.currency)),
      h('td', { class: 'num' }, money(x.iva_transferred_mxn, null))))));
}

function ivaSection(d) {
  return h('section', { id: 'month-iva', 'aria-labelledby': 'month-iva-h' },
    h('h2', { id: 'month-iva-h' }, t('iva_h')),
    h('p', { class: 'muted' }, t('iva_hint')),
    figures(d.figures),
    lines('iva-issued', t('iva_issued'), d.issued),
    lines('iva-received', t('iva_received'), d.received),
    excluded(d.excluded));
}

export function render(main) {
  const err = h('div');
  const formSlot = h('div');
  const results = h('div', { id: 'month', 'aria-live': 'polite' });
  main.replaceChildren(h('h1', null, t('month')), h('p', { class: 'muted' }, t('month_hint')), err, formSlot, results);
  let latest = 0;
  const path = (p) => `/v1/entities/${encodeURIComponent(p.entity_id)}/iva`;
  const load = async () => {
    const p = state.params;
    if (!p) return;
    const mine = latest += 1;
    results.replaceChildren(h('p', { class: 'muted' }, t('loading')));
    try {
      const [runs, iva] = await Promise.all([extractionsOf(p.entity_id, p.month), api('GET', withQuery(path(p), { month: p.month }))]);
      if (mine === latest) results.replaceChildren(extractionsSection(runs), ivaSection(iva), diotSection(p.entity_id, p.month));
    } catch (e) {
      if (e.status !== 401 && mine === latest) results.replaceChildren(errorBox(e));
    }
  };
  (async () => {
    let list = [];
    try { list = await allEntities(); } catch (e) { if (e.status !== 401) err.replaceChildren(errorBox(e)); return; }
    if (list.length === 0) { formSlot.replaceChildren(h('p', null, t('summary_no_entities'))); return; }
    const p = state.params || { entity_id: list[0].id, month: lastMonth() };
    const form = h('form', { class: 'grid', id: 'month-form' },
      select(t('entity'), 'entity_id', entityOptions(list), p.entity_id),
      field(t('month_month'), { name: 'month', type: 'month', value: p.month, required: true, pattern: '[0-9]{4}-[0-9]{2}', placeholder: 'AAAA-MM' }),
      h('div', { class: 'actions' },
        h('button', { type: 'submit' }, t('month_show')),
        downloadButton('iva-xlsx', t('iva_xlsx'), () => {
          const params = values(form);
          return { url: withQuery(path(params), { month: params.month, format: 'xlsx' }), name: `iva-${params.month}.xlsx` };
        }, results)));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      state.params = values(form);
      load();
    });
    formSlot.replaceChildren(form);
    if (state.params) load();
  })();
  return null;
}
