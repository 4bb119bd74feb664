// Invoices: the class's columns, row, codes, filters and totals on the shared list
// (documents.js), and its two export row kinds (invoices, or their concepts).
import { t } from './i18n.js';
import { h, badge, field, select } from './dom.js';
import { money, satDay } from './format.js';
import { entityOptions } from './entities.js';
import { renderList } from './documents.js';
import { situationBadge } from './list_69b.js';
import { sealBadge } from './seal.js';
import { describe, entries, label, description, editionOf } from './catalogs.js';

const state = { filters: {}, cursors: [''] };

/** A date, its time beneath it. */
export function dayCell(s) {
  const [day, time] = satDay(s);
  return [day, time ? h('div', { class: 'muted' }, time) : null];
}

/** A code and its description beneath it. */
function code(catalog, value, edition) {
  const words = description(catalog, value, edition);
  return [value || '—', words ? h('div', { class: 'muted' }, words) : null];
}

/** The SAT's last answer about an invoice, as a badge (or that it was not asked yet). */
export function satBadge(s) {
  if (!s) return h('span', { class: 'muted' }, t('sat_unchecked_short'));
  return h('span', { class: `badge s-sat-${s.state}` }, t(`sat_${s.state}`));
}

export function render(main) {
  return renderList(main, {
    id: 'invoice',
    title: t('invoices'),
    path: '/v1/invoices',
    state,
    noun: [t('invoice_one'), t('invoice_many')],
    searchHint: t('search_hint'),
    columns: [[t('issued_at')], [t('folio')], [t('type')], [t('issuer')], [t('receiver')], [t('total'), 'num'], [t('due'), 'num'],
      [t('payment_method')], [t('status')], [t('sat_state')], [t('seal_col')]],
    describe: (docs) => describe(docs.flatMap((i) => [['c_TipoDeComprobante', i.type, editionOf(i.version)],
      ['c_MetodoPago', i.payment_method, editionOf(i.version)]])),
    row: (i) => h('tr', { 'data-invoice': i.id },
      h('td', { class: 'day' }, dayCell(i.issued_at)),
      h('td', { class: 'folio' }, h('a', { href: `#/invoices/${i.id}`, title: i.uuid }, [i.series, i.folio].filter(Boolean).join('-') || i.uuid)),
      h('td', { class: 'type' }, code('c_TipoDeComprobante', i.type, editionOf(i.version))),
      h('td', null, i.issuer.tax_id, h('div', { class: 'muted user' }, i.issuer.name || '')),
      h('td', null, i.receiver.tax_id, h('div', { class: 'muted user' }, i.receiver.name || '')),
      h('td', { class: 'num' }, money(i.total, i.currency)),
      h('td', { class: 'num' }, money(i.due_amount, i.currency)),
      h('td', { class: 'method' }, code('c_MetodoPago', i.payment_method, editionOf(i.version))),
      h('td', null, badge(i.status), i.counterparty_69b
        ? h('div', null, situationBadge(i.counterparty_69b.situation)) : null),
      h('td', { class: 'sat' }, satBadge(i.sat_status)),
      h('td', { class: 'seal' }, sealBadge(i.seal))),
    filters: async (list, f) => {
      let types = [];
      try { types = await entries('c_TipoDeComprobante'); } catch (e) { if (e.status === 401) throw e; }
      const typeLabel = (x) => (types.length ? label('c_TipoDeComprobante', x) : x);
      let methods = [];
      try { methods = await entries('c_MetodoPago'); } catch (e) { if (e.status === 401) throw e; }
      const methodLabel = (x) => (methods.length ? label('c_MetodoPago', x) : x);
      return [
        select(t('entity'), 'entity_id', entityOptions(list, t('any')), f.entity_id || ''),
        select(t('direction'), 'direction', [['', t('any_direction')], ['issued', t('issued')], ['received', t('received')]], f.direction || ''),
        field(t('issued_from'), { name: 'issued_from', type: 'date', value: f.issued_from || '' }),
        field(t('issued_to'), { name: 'issued_to', type: 'date', value: f.issued_to || '' }),
        select(t('type'), 'type', [['', t('any')], ...['I', 'E', 'T', 'N', 'P'].map((x) => [x, typeLabel(x)])], f.type || ''),
        select(t('status'), 'status', [['', t('any')], ['active', t('active')], ['cancelled', t('cancelled')]], f.status || ''),
        select(t('payment_method'), 'payment_method', [['', t('any')], ...['PUE', 'PPD'].map((x) => [x, methodLabel(x)])], f.payment_method || ''),
        select(t('outstanding'), 'outstanding', [['', t('any')], ['true', t('outstanding')], ['false', t('outstanding_no')]], f.outstanding || ''),
        select(t('sat_state'), 'sat_state', [['', t('any')], ...['active', 'cancelled', 'not_found', 'not_registered'].map((v) => [v, t(`sat_${v}`)])], f.sat_state || ''),
        select(t('seal_col'), 'seal', [['', t('seal_any')], ...['valid', 'invalid', 'unverified'].map((v) => [v, t(`seal_${v}`)])], f.seal || ''),
        select(t('l69b'), 'counterparty_69b', [['', t('any')], ['listed', t('l69b_any')],
          ...['presumed', 'definitive', 'disproved', 'favorable_ruling'].map((v) => [v, t(`l69b_${v}`)])], f.counterparty_69b || ''),
        field(t('issuer_rfc'), { name: 'issuer_tax_id', value: f.issuer_tax_id || '', autocomplete: 'off' }),
        field(t('receiver_rfc'), { name: 'receiver_tax_id', value: f.receiver_tax_id || '', autocomplete: 'off' }),
      ];
    },
    totals: [[t('subtotal'), 'subtotal'], [t('taxes_transferred'), 'taxes_transferred'], [t('taxes_withheld'), 'taxes_withheld'],
      [t('total'), 'total'], [t('due'), 'due_amount']],
    // The accountant's spreadsheet of /docs/exports with the filters applied to the list.
    exportTitle: t('export'),
    exports: [
      ['invoices', t('export_invoices'), '/v1/invoices/export'],
      ['items', t('export_items'), '/v1/invoices/export/items'],
    ],
  });
}
