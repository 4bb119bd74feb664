// One retention: its parties, period, totals, withheld taxes and complements, and its
// XML and PDF (printed from the XML unless one was imported with it).
import { t, lang } from './i18n.js';
import { api, download } from './api.js';
import { h, badge, table, errorBox, flash, plain } from './dom.js';
import { money, satDate, timestamp } from './format.js';
import { periodText, receiverOf } from './retentions.js';
import { failure } from './errors.js';
import { describe, label } from './catalogs.js';
import { sealSection } from './seal.js';

function props(pairs) {
  return h('dl', { class: 'props' }, pairs.filter(([, v]) => v !== undefined).flatMap(([k, v]) => [
    h('dt', null, k), h('dd', null, v === null || v === '' ? '—' : v)]));
}

// RET 1.0 writes the tax as 01, 02, 03: the CFDI catalog's 001, 002, 003.
const TAX_CODE = { '01': '001', 1: '001', '02': '002', 2: '002', '03': '003', 3: '003' };
const taxCode = (tax) => TAX_CODE[tax] || tax;

export function render(main, id) {
  const body = h('div');
  main.replaceChildren(h('p', null, h('a', { href: '#/retentions' }, `← ${t('ret_back')}`)), h('h1', null, t('retention')), body);
  (async () => {
    try {
      const r = await api('GET', `/v1/retentions/${encodeURIComponent(id)}`);
      main.querySelector('h1').textContent = plain(`${t('retention')} ${r.internal_folio || r.uuid}`);
      await describe([['c_CveRetenc', r.retention_key],
        ...r.withheld_taxes.flatMap((x) => [['c_Impuesto', taxCode(x.tax)], ['c_TipoPagoRet', x.payment_type]])]);
      const dl = async (format) => {
        try {
          await download(`/v1/retentions/${r.id}/cfdi?format=${format}`, `${r.uuid}.${format}`);
          flash(`${t('downloaded')}: ${r.uuid}.${format}`);
        } catch (e) { if (e.status !== 401) flash(failure(e), 'error'); }
      };
      const receiver = receiverOf(r);
      const tot = r.totals;
      body.replaceChildren(...[
        h('div', { class: 'actions' },
          h('button', { type: 'button', id: 'download-retention-xml', onclick: () => dl('xml') }, t('download_xml')),
          h('button', { type: 'button', id: 'download-retention-pdf', class: 'secondary', onclick: () => dl('pdf') }, r.has_pdf ? t('download_pdf') : t('download_rendered_pdf'))),
        props([
          [t('uuid'), h('code', null, r.uuid)], [t('status'), badge(r.status)], [t('ret_version'), `CFDI de Retenciones ${r.version}`],
          [t('direction'), t(r.direction === 'received' ? 'ret_received' : 'ret_issued')],
          [t('ret_key'), `${label('c_CveRetenc', r.retention_key)}${r.retention_description ? ` (${r.retention_description})` : ''}`],
          [t('period'), periodText(r.period)], [t('ret_folio'), r.internal_folio],
          [t('issued_at'), satDate(r.issued_at)], [t('certified_at'), satDate(r.certified_at)],
          [t('issuer'), `${r.issuer.tax_id} · ${r.issuer.name || ''}`],
          [t('receiver'), `${receiver.tax_id} · ${receiver.name} (${(r.receiver && r.receiver.nationality) || '—'})`],
          [t('cancelled'), r.cancelled_at ? satDate(r.cancelled_at) : undefined],
          [t('created_at'), `${timestamp(r.created_at, lang())} (${t('mx_time')})`],
        ]),
        ...sealSection(r.seal),
        h('h2', null, t('ret_totals')),
        props([[t('ret_operation'), money(tot.operation, 'MXN')], [t('ret_taxed'), money(tot.taxed, 'MXN')], [t('ret_exempt'), money(tot.exempt, 'MXN')],
          [t('ret_withheld'), h('strong', { id: 'retention-withheld' }, money(tot.withheld, 'MXN'))]]),
        h('h2', null, t('ret_taxes')),
        r.withheld_taxes.length === 0 ? h('p', { class: 'muted' }, t('no_results')) : table(
          [[t('ret_tax')], [t('ret_base'), 'num'], [t('amount'), 'num'], [t('ret_payment_type')]],
          r.withheld_taxes.map((x) => h('tr', null, h('td', null, label('c_Impuesto', taxCode(x.tax))),
            h('td', { class: 'num' }, money(x.base, 'MXN')), h('td', { class: 'num' }, money(x.amount, 'MXN')), h('td', null, label('c_TipoPagoRet', x.payment_type))))),
        h('h2', null, t('ret_complements')),
        r.complements.length === 0 ? h('p', { class: 'muted' }, t('no_results')) : r.complements.map((c) => h('section', { class: 'panel' },
          h('h3', null, `${c.name} ${c.version ? `(${c.version})` : ''}`),
          props(Object.entries(c.amounts || {}).map(([k, v]) => [k, money(v, 'MXN')])))),
      ].flat().filter(Boolean));
    } catch (e) {
      if (e.status !== 401) body.replaceChildren(errorBox(e.status === 404 ? { message: t('not_found') } : e));
    }
  })();
  return null;
}
