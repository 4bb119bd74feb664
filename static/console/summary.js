// The period tax summary (GET /v1/entities/{id}/summary, /docs/summary): pick a
// taxpayer, a period and a direction; every section of the JSON is drawn as it comes
// (a list of objects as a table, an object as a list of its fields), so a field or a
// section the API adds later shows without a change here. Amounts stay the strings the
// API wrote (format.js). Received invoices from definitive 69-B issuers come first, as
// a warning. The same figures download as the API's XLSX.
import { t, tf } from './i18n.js';
import { api, withQuery } from './api.js';
import { h, field, select, table, errorBox, values, downloadButton } from './dom.js';
import { allEntities, entityOptions } from './entities.js';
import { money, satDate } from './format.js';
import { describe, label as codeLabel } from './catalogs.js';

// The choice survives a visit to another page, like the invoice filters.
const state = { params: null };

/** The label of a JSON field or section: translated when known, else the name as is. */
function label(key) {
  const text = t(`sum_${key}`);
  return text === `sum_${key}` ? key : text;
}

// The JSON's object keys come sorted by name; known sections and columns are shown in
// the order an accountant reads them, anything else after them as it comes.
const ORDER = ['totals', 'net', 'taxes', 'cash_basis_iva', 'local_taxes', 'payroll_taxes', 'withholdings', 'unresolved_payments', 'excluded',
  'type', 'source', 'kind', 'tax', 'tax_name', 'factor', 'rate', 'currency', 'count', 'base', 'amount',
  'payment_type', 'base_mxn', 'amount_mxn',
  'subtotal', 'discount', 'taxes_transferred', 'taxes_withheld', 'local_taxes_transferred', 'local_taxes_withheld', 'total',
  'payment_invoice_id', 'related_uuid', 'paid_at', 'amount_paid', 'reason'];
const rank = (key) => { const i = ORDER.indexOf(key); return i < 0 ? ORDER.length : i; };
const ordered = (keys) => [...keys].sort((a, b) => rank(a) - rank(b));

/** A value the API wrote, as text: numbers (strings here) with thousands separators. */
function text(value) {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'boolean') return t(value ? 'yes' : 'no');
  if (typeof value === 'object') {
    return Array.isArray(value) ? value.map(text).join(', ')
      : Object.entries(value).map(([k, v]) => `${label(k)}: ${text(v)}`).join('; ');
  }
  const s = String(value);
  const number = /^(-?)(\d+)(\.\d+)?$/.exec(s);
  return number ? `${number[1]}${number[2].replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${number[3] || ''}` : s;
}

// Codes shown with their catalog's description, by the field that holds them.
const CATALOGS = { type: 'c_TipoDeComprobante', tax: 'c_Impuesto', payment_type: 'c_TipoPagoRet' };
// Columns a described code makes redundant (`tax` reads `002 - IVA`).
const SHOWN_BY = { tax_name: 'tax' };

/** Every code the summary shows, for `describe`. */
function codes(value, out = []) {
  if (Array.isArray(value)) value.forEach((v) => codes(v, out));
  else if (isRecord(value)) {
    Object.entries(value).forEach(([k, v]) => {
      if (CATALOGS[k] && typeof v === 'string') out.push([CATALOGS[k], v]);
      else codes(v, out);
    });
  }
  return out;
}

/** A table cell: an invoice id links to the invoice; a code reads with its description;
 *  a known word in words; a rate (Tasa) as a percentage; a date day first. */
function cell(key, value, row) {
  if (/(^|_)invoice_id$/.test(key) && typeof value === 'string') return h('a', { href: `#/invoices/${encodeURIComponent(value)}` }, value);
  if (typeof value === 'string' && CATALOGS[key]) return codeLabel(CATALOGS[key], value);
  if (typeof value === 'string' && ['source', 'kind', 'reason'].includes(key)) {
    const words = t(`sumv_${value}`);
    if (words !== `sumv_${value}`) return h('span', { title: value }, words);
  }
  if (key === 'rate' && isNumber(value) && row.factor !== 'Cuota') return percent(value);
  if (/(_at|_date)$/.test(key) && typeof value === 'string') return satDate(value);
  return text(value);
}

/** A rate (a fraction the API wrote, `0.160000`) as a percentage: `16%`, exactly. */
function percent(rate) {
  const [int, frac = ''] = rate.replace('-', '').split('.');
  const digits = `${int}${frac.padEnd(2, '0')}`;
  const whole = digits.slice(0, int.length + 2).replace(/^0+(?=\d)/, '');
  const rest = digits.slice(int.length + 2).replace(/0+$/, '');
  return `${rate.startsWith('-') ? '-' : ''}${whole}${rest ? `.${rest}` : ''}%`;
}

/** Codes and words wrap between words only; long free text (a name) anywhere. */
const wrap = (v) => (typeof v === 'string' && v.length > 40 ? 'user' : null);

const isNumber = (v) => typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v);
const isRecord = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** One section of the answer, whatever its shape. */
function section(key, value, level) {
  const heading = h(level === 2 ? 'h2' : 'h3', null, label(key));
  if (Array.isArray(value) && (value.length === 0 || value.every(isRecord))) {
    if (value.length === 0) return [heading, h('p', { class: 'muted' }, t('summary_empty'))];
    // Columns: every field of every row, in the order they first appear.
    const present = new Set(value.flatMap((row) => Object.keys(row)));
    const columns = ordered([...present].filter((c) => !(SHOWN_BY[c] && present.has(SHOWN_BY[c]))));
    const numeric = new Set(columns.filter((c) => value.every((row) => row[c] === null || row[c] === undefined || isNumber(row[c]))));
    return [heading, table(columns.map((c) => [label(c), numeric.has(c) ? 'num' : null]),
      value.map((row) => h('tr', null, columns.map((c) => h('td', { class: numeric.has(c) ? 'num' : wrap(row[c]) }, cell(c, row[c], row))))))];
  }
  if (isRecord(value)) {
    const entries = ordered(Object.keys(value)).map((k) => [k, value[k]]);
    const scalars = entries.filter(([, v]) => !isRecord(v) && !Array.isArray(v));
    const nested = entries.filter(([, v]) => isRecord(v) || Array.isArray(v));
    return [heading,
      scalars.length ? h('dl', { class: 'props' }, scalars.flatMap(([k, v]) => [h('dt', null, label(k)), h('dd', null, text(v))])) : null,
      ...nested.flatMap(([k, v]) => section(k, v, level + 1))];
  }
  return [heading, h('p', null, text(value))];
}

/** `definitive_69b_issuers`: the period's received invoices whose issuer is definitive on
 *  the 69-B list, per issuer and currency (the API leaves it empty for issued ones). */
function definitiveIssuers(lines, direction) {
  if (!lines || (!lines.length && direction !== 'received')) return [];
  const heading = h('h2', { id: 'summary-69b-h' }, t('sum69b_h'));
  if (!lines.length) return [h('section', { id: 'summary-69b', 'aria-labelledby': 'summary-69b-h' }, heading, h('p', { class: 'muted' }, t('sum69b_none')))];
  return [h('section', { id: 'summary-69b', 'aria-labelledby': 'summary-69b-h' }, heading,
    h('div', { class: 'error', role: 'note' }, h('p', null, h('strong', null, t('l69b_definitive_note')))),
    table([[t('rfc')], [t('name')], [t('sum69b_definitive')], [t('currency')], [t('sum_count'), 'num'], [t('subtotal'), 'num'], [t('total'), 'num']],
      lines.map((l) => h('tr', { 'data-issuer': l.tax_id },
        h('td', null, l.tax_id), h('td', { class: 'user' }, l.name),
        h('td', null, `${l.definitive_sat || '—'} / ${l.definitive_dof || '—'}`), h('td', null, l.currency || '—'),
        h('td', { class: 'num' }, l.count), h('td', { class: 'num' }, money(l.subtotal, l.currency)),
        h('td', { class: 'num' }, money(l.total, l.currency))))),
    h('p', { class: 'muted' }, tf('l69b_version', { version: lines[0].list_version })))];
}

/** The answer: the period it covers, the 69-B warning, then every other field as a section. */
function answer(summary, names) {
  const { entity_id: entity, direction, from, to, definitive_69b_issuers: definitive, ...sections } = summary;
  return [
    h('dl', { class: 'props', id: 'summary-period' },
      h('dt', null, t('entity')), h('dd', null, names.get(entity) || entity),
      h('dt', null, t('direction')), h('dd', null, t(direction)),
      h('dt', null, t('period')), h('dd', null, `${satDate(from)} – ${satDate(to)}`)),
    ...definitiveIssuers(definitive, direction),
    ...ordered(Object.keys(sections)).flatMap((k) => section(k, sections[k], 2)),
  ];
}

/** The first and last day of the month before today's (the monthly return's period). */
function lastMonth() {
  const now = new Date();
  const first = new Date(Date.UTC(now.getFullYear(), now.getMonth() - 1, 1));
  const last = new Date(Date.UTC(now.getFullYear(), now.getMonth(), 0));
  return [first, last].map((d) => d.toISOString().slice(0, 10));
}

export function render(main) {
  const err = h('div');
  const formSlot = h('div');
  const results = h('div', { id: 'summary', 'aria-live': 'polite' });
  main.replaceChildren(h('h1', null, t('summary')), h('p', { class: 'muted' }, t('summary_hint')), err, formSlot, results);
  let names = new Map();
  let latest = 0;
  const path = (p) => `/v1/entities/${encodeURIComponent(p.entity_id)}/summary`;
  const query = (p) => ({ from: p.from, to: p.to, direction: p.direction });
  const load = async () => {
    const p = state.params;
    if (!p) return;
    const mine = latest += 1;
    results.replaceChildren(h('p', { class: 'muted' }, t('loading')));
    try {
      const summary = await api('GET', withQuery(path(p), query(p)));
      await describe(codes(summary));
      if (mine === latest) results.replaceChildren(...answer(summary, names));
    } catch (e) {
      if (e.status !== 401 && mine === latest) results.replaceChildren(errorBox(e));
    }
  };
  (async () => {
    let list = [];
    try { list = await allEntities(); } catch (e) { if (e.status !== 401) err.replaceChildren(errorBox(e)); return; }
    if (list.length === 0) { formSlot.replaceChildren(h('p', null, t('summary_no_entities'))); return; }
    names = new Map(list.map((e) => [e.id, `${e.tax_id} · ${e.name}`]));
    const [from, to] = lastMonth();
    const p = state.params || { entity_id: list[0].id, direction: 'issued', from, to };
    const form = h('form', { class: 'grid', id: 'summary-form' },
      select(t('entity'), 'entity_id', entityOptions(list), p.entity_id),
      select(t('direction'), 'direction', [['issued', t('issued')], ['received', t('received')]], p.direction),
      field(t('from'), { name: 'from', type: 'date', value: p.from, required: true }),
      field(t('to'), { name: 'to', type: 'date', value: p.to, required: true }),
      h('div', { class: 'actions' },
        h('button', { type: 'submit' }, t('summary_show')),
        downloadButton('summary-xlsx', t('summary_xlsx'), () => {
          const params = values(form);
          return {
            url: withQuery(path(params), { ...query(params), format: 'xlsx' }),
            name: `summary-${params.from}-${params.to}-${params.direction}.xlsx`,
          };
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
