// The month close of one taxpayer: the extractions that cover the month and their
// state, whether the month is complete (each side's summary, /docs/summary#complete)
// with the one button that fetches the invoices it misses and its progress, then the
// month's IVA determination (GET /v1/entities/{id}/iva,
// /docs/summary#iva): the figures in pesos, each side's cash-basis lines and what was
// left out with its reason; the same figures download as the API's XLSX. Then the
// month's DIOT (diot.js). Amounts stay the strings the API wrote (format.js).
import { t, tf, lang } from './i18n.js';
import { api, withQuery } from './api.js';
import { h, field, select, table, errorBox, values, badge, downloadButton } from './dom.js';
import { allEntities, entityOptions } from './entities.js';
import { money, timestamp } from './format.js';
import { diotSection } from './diot.js';

// The choice survives a visit to another page, like the summary's; so do the last
// completion's runs, shown until another month is chosen.
const state = { params: null, completion: null };
const POLL_MS = 1000;

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

/** Each side's summary of the month: whether it is complete, and what it misses. */
async function completeness(entity, month) {
  const [from, to] = bounds(month);
  const path = `/v1/entities/${encodeURIComponent(entity)}/summary`;
  const sides = ['issued', 'received'];
  const answers = await Promise.all(sides.map((direction) => api('GET', withQuery(path, { from, to, direction }))));
  return sides.map((side, i) => ({ side, complete: answers[i].complete, missing: answers[i].missing_invoices }));
}

/** The completion's runs: what each asked for, its state and what it did not find. */
function runsTable(runs) {
  return table([[t('download_type')], [t('status')], [t('complete_asked'), 'num'], [t('processed'), 'num'], [t('complete_not_found')]],
    runs.map((x) => h('tr', { 'data-extraction': x.id },
      h('td', null, t(x.options.download_type)), h('td', null, badge(x.status)),
      h('td', { class: 'num' }, x.options.uuids.length), h('td', { class: 'num' }, x.invoices_processed),
      h('td', null, (x.uuids_not_found || []).length ? h('ul', { class: 'not-found' }, x.uuids_not_found.map((u) => h('li', null, h('code', null, u)))) : '—'))),
  t('complete_runs'));
}

/** Whether the month is complete; when not, the missing UUIDs per side and the button
 * that starts their extraction, polling its runs until they end, then `reload`. */
function completenessSection(p, sides, timers, reload) {
  const all = sides.every((s) => s.complete);
  const perSide = sides.map((s) => h('section', { id: `complete-${s.side}`, 'aria-labelledby': `complete-${s.side}-h` },
    h('h3', { id: `complete-${s.side}-h` }, t(s.side)),
    s.complete ? h('p', null, t('complete_side_yes'))
      : h('div', null, h('p', null, tf('complete_side_no', { count: s.missing.count, payments: s.missing.payments })),
        h('ul', { class: 'uuids' }, s.missing.uuids.map((u) => h('li', null, h('code', null, u)))))));
  const progress = h('div', { id: 'complete-progress', 'aria-live': 'polite' });
  const shown = state.completion && state.completion.key === `${p.entity_id}/${p.month}` ? state.completion : null;
  if (shown) progress.setAttribute('data-ended', 'true');
  if (shown) progress.replaceChildren(h('p', null, t(shown.runs.length ? 'complete_done' : 'complete_nothing')), shown.runs.length ? runsTable(shown.runs) : '');
  const err = h('div');
  const [from, to] = bounds(p.month);
  const start = async (ev) => {
    const button = ev.currentTarget;
    button.disabled = true;
    err.replaceChildren();
    progress.replaceChildren(h('p', null, t('complete_running')));
    try {
      const path = `/v1/entities/${encodeURIComponent(p.entity_id)}/summary/complete`;
      const answer = await api('POST', withQuery(path, { from, to }));
      const key = `${p.entity_id}/${p.month}`;
      let runs = answer.extractions;
      const watch = async () => {
        runs = await Promise.all(runs.map((x) => (['finished', 'failed'].includes(x.status) ? x
          : api('GET', `/v1/extractions/${encodeURIComponent(x.id)}`))));
        if (runs.every((x) => ['finished', 'failed'].includes(x.status))) {
          state.completion = { key, runs };
          reload();
          return;
        }
        progress.replaceChildren(h('p', null, t('complete_running')), runsTable(runs));
        timers.add(setTimeout(watch, POLL_MS));
      };
      await watch();
    } catch (e) {
      button.disabled = false;
      progress.replaceChildren();
      if (e.status !== 401) err.replaceChildren(errorBox(e));
    }
  };
  return h('section', { id: 'month-complete', 'data-entity': p.entity_id, 'data-month': p.month, 'aria-labelledby': 'month-complete-h' },
    h('h2', { id: 'month-complete-h' }, t('complete_h')),
    h('p', { id: 'month-complete-state', 'data-complete': String(all) }, h('strong', null, t(all ? 'complete_yes' : 'complete_no'))),
    ...perSide,
    all ? null : h('p', { class: 'muted' }, t('complete_hint')),
    all ? null : h('div', { class: 'actions' }, h('button', { type: 'button', id: 'complete-run', onclick: start }, t('complete_run'))),
    err, progress);
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
  const timers = new Set();
  const path = (p) => `/v1/entities/${encodeURIComponent(p.entity_id)}/iva`;
  const load = async () => {
    const p = state.params;
    if (!p) return;
    const mine = latest += 1;
    results.replaceChildren(h('p', { class: 'muted' }, t('loading')));
    try {
      const [runs, sides, iva] = await Promise.all([extractionsOf(p.entity_id, p.month), completeness(p.entity_id, p.month),
        api('GET', withQuery(path(p), { month: p.month }))]);
      if (mine === latest) {
        results.replaceChildren(extractionsSection(runs), completenessSection(p, sides, timers, load), ivaSection(iva),
          diotSection(p.entity_id, p.month));
      }
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
  return () => timers.forEach((timer) => clearTimeout(timer));
}
