// Invoices: the class's columns, row and filters on the shared list (documents.js),
// and its two export row kinds (invoices, or their concepts).
import { t } from './i18n.js';
import { h, badge, field, select } from './dom.js';
import { money, satDate } from './format.js';
import { entityOptions } from './entities.js';
import { renderList } from './documents.js';
import { situationBadge } from './list_69b.js';

const state = { filters: {}, cursors: [''] };

export function render(main) {
  return renderList(main, {
    id: 'invoice',
    title: t('invoices'),
    path: '/v1/invoices',
    state,
    columns: [[t('issued_at')], [t('folio')], [t('type')], [t('issuer')], [t('receiver')], [t('total'), 'num'], [t('due'), 'num'], [t('status')]],
    row: (i) => h('tr', { 'data-invoice': i.id },
      h('td', null, satDate(i.issued_at)),
      h('td', null, h('a', { href: `#/invoices/${i.id}`, title: i.uuid }, [i.series, i.folio].filter(Boolean).join('-') || i.uuid)),
      h('td', null, i.type),
      h('td', null, i.issuer.tax_id, h('div', { class: 'muted' }, i.issuer.name || '')),
      h('td', null, i.receiver.tax_id, h('div', { class: 'muted' }, i.receiver.name || '')),
      h('td', { class: 'num' }, money(i.total, i.currency)),
      h('td', { class: 'num' }, money(i.due_amount, i.currency)),
      h('td', null, badge(i.status), i.counterparty_69b
        ? h('div', null, situationBadge(i.counterparty_69b.situation)) : null)),
    filters: (list, f) => [
      select(t('entity'), 'entity_id', entityOptions(list, t('any')), f.entity_id || ''),
      select(t('direction'), 'direction', [['', t('any')], ['issued', t('issued')], ['received', t('received')]], f.direction || ''),
      field(t('issued_from'), { name: 'issued_from', type: 'date', value: f.issued_from || '' }),
      field(t('issued_to'), { name: 'issued_to', type: 'date', value: f.issued_to || '' }),
      select(t('type'), 'type', [['', t('any')], ...['I', 'E', 'T', 'N', 'P'].map((x) => [x, x])], f.type || ''),
      select(t('status'), 'status', [['', t('any')], ['active', t('active')], ['cancelled', t('cancelled')]], f.status || ''),
      select(t('payment_method'), 'payment_method', [['', t('any')], ['PUE', 'PUE'], ['PPD', 'PPD']], f.payment_method || ''),
      select(t('outstanding'), 'outstanding', [['', t('any')], ['true', t('outstanding')], ['false', t('outstanding_no')]], f.outstanding || ''),
      select(t('sat_state'), 'sat_state', [['', t('any')], ...['active', 'cancelled', 'not_found', 'not_registered'].map((v) => [v, t(`sat_${v}`)])], f.sat_state || ''),
      select(t('l69b'), 'counterparty_69b', [['', t('any')], ['listed', t('l69b_any')],
        ...['presumed', 'definitive', 'disproved', 'favorable_ruling'].map((v) => [v, t(`l69b_${v}`)])], f.counterparty_69b || ''),
      field(t('issuer_rfc'), { name: 'issuer_tax_id', value: f.issuer_tax_id || '', autocomplete: 'off' }),
      field(t('receiver_rfc'), { name: 'receiver_tax_id', value: f.receiver_tax_id || '', autocomplete: 'off' }),
    ],
    // The export of /docs/exports with the filters applied to the list (not the page).
    exportTitle: t('export'),
    exports: [
      ['invoices', t('export_invoices'), '/v1/invoices/export', 'invoices'],
      ['items', t('export_items'), '/v1/invoices/export/items', 'invoice-items'],
    ],
  });
}
