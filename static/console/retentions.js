// Retentions (CFDI de Retenciones e Información de Pagos): the class's columns, row and
// filters on the shared list (documents.js), and its export.
import { t } from './i18n.js';
import { h, badge, field, select } from './dom.js';
import { money } from './format.js';
import { entityOptions } from './entities.js';
import { renderList } from './documents.js';
import { dayCell } from './invoices.js';
import { describe, description } from './catalogs.js';
import { sealBadge } from './seal.js';

const state = { filters: {}, cursors: [''] };

/** "6–6/2014" style: the months a retention covers. */
export function periodText(p) {
  if (!p) return '—';
  const months = p.start_month === p.end_month ? `${p.start_month}` : `${p.start_month}–${p.end_month}`;
  return `${months}/${p.year}`;
}

/** The receiver's tax id: a national one's RFC, else a foreign one's id. */
export function receiverOf(r) {
  const x = r.receiver || {};
  const party = x.national || x.foreign || {};
  return { tax_id: party.tax_id || '—', name: party.name || '' };
}

export function render(main) {
  return renderList(main, {
    id: 'retention',
    title: t('retentions'),
    hint: t('ret_hint'),
    path: '/v1/retentions',
    state,
    noun: [t('retention_one'), t('retention_many')],
    searchHint: t('ret_search_hint'),
    describe: (docs) => describe(docs.map((r) => ['c_CveRetenc', r.retention_key])),
    columns: [[t('issued_at')], [t('ret_key')], [t('period')], [t('issuer')], [t('receiver')], [t('ret_operation'), 'num'], [t('ret_withheld'), 'num'], [t('status')], [t('seal_col')]],
    row: (r) => {
      const receiver = receiverOf(r);
      return h('tr', { 'data-retention': r.id },
        h('td', { class: 'day' }, h('a', { href: `#/retentions/${r.id}`, title: r.uuid }, dayCell(r.issued_at))),
        h('td', { class: 'key' }, r.retention_key || '—',
          h('div', { class: 'muted' }, description('c_CveRetenc', r.retention_key) || r.retention_description || '')),
        h('td', null, periodText(r.period)),
        h('td', null, r.issuer.tax_id, h('div', { class: 'muted user' }, r.issuer.name || '')),
        h('td', null, receiver.tax_id, h('div', { class: 'muted user' }, receiver.name)),
        h('td', { class: 'num' }, money(r.totals.operation, 'MXN')),
        h('td', { class: 'num' }, money(r.totals.withheld, 'MXN')),
        h('td', null, badge(r.status)),
        h('td', { class: 'seal' }, sealBadge(r.seal)));
    },
    filters: (list, f) => [
      select(t('entity'), 'entity_id', entityOptions(list, t('any')), f.entity_id || ''),
      select(t('direction'), 'direction', [['', t('any_direction')], ['received', t('ret_received')], ['issued', t('ret_issued')]], f.direction || ''),
      field(t('ret_period_from'), { name: 'period_from', type: 'month', value: f.period_from || '', placeholder: 'AAAA-MM' }),
      field(t('ret_period_to'), { name: 'period_to', type: 'month', value: f.period_to || '', placeholder: 'AAAA-MM' }),
      field(t('ret_key'), { name: 'retention_key', value: f.retention_key || '', inputmode: 'numeric', autocomplete: 'off' }),
      field(t('ret_counterpart'), { name: 'counterpart_tax_id', value: f.counterpart_tax_id || '', autocomplete: 'off' }),
      select(t('status'), 'status', [['', t('any')], ['active', t('active')], ['cancelled', t('cancelled')]], f.status || ''),
      select(t('seal_col'), 'seal', [['', t('seal_any')], ...['valid', 'invalid', 'unverified'].map((v) => [v, t(`seal_${v}`)])], f.seal || ''),
    ],
    totals: [[t('ret_operation'), 'operation'], [t('ret_taxed'), 'taxed'], [t('ret_exempt'), 'exempt'], [t('ret_withheld'), 'withheld']],
    exportTitle: t('ret_export'),
    exports: [['retentions', t('retentions'), '/v1/retentions/export']],
  });
}
