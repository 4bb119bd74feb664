// One invoice: its fields, its status at the SAT (with a check on demand) and its
// counterparty on the 69-B list, concepts, amounts, payments, CFDI relations and
// related documents, and its XML and PDF downloads.
import { t, tf, lang } from './i18n.js';
import { failure } from './errors.js';
import { describe, label, editionOf } from './catalogs.js';
import { api, download } from './api.js';
import { h, badge, table, errorBox, flash, plain } from './dom.js';
import { money, satDate, timestamp } from './format.js';
import { tone, publications } from './list_69b.js';
import { sealSection } from './seal.js';

function props(pairs) {
  return h('dl', { class: 'props' }, pairs.filter(([, v]) => v !== undefined).flatMap(([k, v]) => [
    h('dt', null, k), h('dd', null, v === null || v === '' ? '—' : v)]));
}

function relatedTable(docs) {
  return table(
    [[t('uuid')], [t('folio')], [t('installment'), 'num'], [t('previous_balance'), 'num'], [t('amount_paid'), 'num'], [t('outstanding_balance'), 'num']],
    docs.map((d) => h('tr', null, h('td', null, h('code', null, d.uuid)), h('td', null, [d.series, d.folio].filter(Boolean).join('-') || '—'),
      h('td', { class: 'num' }, d.installment ?? '—'), h('td', { class: 'num' }, money(d.previous_balance, d.currency)),
      h('td', { class: 'num' }, money(d.amount_paid, d.currency)), h('td', { class: 'num' }, money(d.outstanding_balance, d.currency)))));
}

/** What the SAT said last (`sat_status`), as a list of its answers. */
function satProps(s) {
  const value = (v) => (v === null || v === undefined ? null : t(`sat_${v}`));
  return s ? props([
    [t('sat_state'), h('span', { class: `badge s-sat-${s.state}`, id: 'sat-state' }, t(`sat_${s.state}`))],
    [t('sat_cancellable'), value(s.cancellable)],
    [t('sat_cancellation'), value(s.cancellation_status)],
    [t('sat_efos'), t(`sat_${s.efos}`)],
    [t('sat_checked_at'), h('span', { id: 'sat-checked-at' }, `${timestamp(s.checked_at, lang())} (${t('mx_time')})`)],
    [t('sat_next_check'), s.next_check_at ? `${timestamp(s.next_check_at, lang())} (${t('mx_time')})` : t('sat_no_more')],
  ]) : h('p', { class: 'muted' }, t('sat_unchecked'));
}

// While a check is awaited: how often the invoice is read again, and for how long.
const SAT_POLL_MS = 1500;
const SAT_PATIENCE_MS = 120000;

/**
 * The SAT's last answer about the invoice (`sat_status`), and a button that asks again.
 * The answer is drawn here when it arrives (the invoice read again until its check is
 * newer), and what is happening is said beside the button, where the eye is. `timers`
 * collects what the page stops when it is left.
 */
function satSection(inv, timers) {
  const answer = h('div', { id: 'sat-answer' }, satProps(inv.sat_status));
  const said = h('p', { id: 'sat-check-status', role: 'status', class: 'muted' });
  const ask = h('button', { type: 'button', id: 'sat-check', class: 'secondary' }, t('sat_check'));
  ask.addEventListener('click', async () => {
    ask.disabled = true;
    const before = inv.sat_status ? inv.sat_status.checked_at : null;
    try {
      await api('POST', `/v1/invoices/${inv.id}/status-check`);
      said.className = 'muted';
      said.textContent = t('sat_check_queued');
    } catch (e) {
      if (e.status !== 401) said.replaceChildren(errorBox(e));
      ask.disabled = false;
      return;
    }
    const started = Date.now();
    const poll = async () => {
      try {
        const now = await api('GET', `/v1/invoices/${inv.id}`);
        const checked = now.sat_status ? now.sat_status.checked_at : null;
        if (checked && checked !== before) {
          inv.sat_status = now.sat_status;
          answer.replaceChildren(satProps(now.sat_status));
          said.className = 'notice';
          said.textContent = tf('sat_check_answered', { state: t(`sat_${now.sat_status.state}`) });
          ask.disabled = false;
          return;
        }
      } catch (e) {
        if (e.status === 401) return;
      }
      if (Date.now() - started > SAT_PATIENCE_MS) {
        said.textContent = t('sat_check_slow');
        ask.disabled = false;
        return;
      }
      timers.add(setTimeout(poll, SAT_POLL_MS));
    };
    timers.add(setTimeout(poll, SAT_POLL_MS));
  });
  return h('section', { id: 'sat-status', 'aria-labelledby': 'sat-h' },
    h('h2', { id: 'sat-h' }, t('sat_h')), answer,
    h('div', { class: 'actions' }, ask), said);
}

/** A warning when the counterparty is on the SAT's 69-B list (`counterparty_69b`), with
 *  each stage the list published it in. */
function list69b(inv) {
  const c = inv.counterparty_69b;
  if (!c) return null;
  return h('div', { class: tone(c.situation), id: 'counterparty-69b', role: 'note' },
    h('p', null, h('strong', null, tf('l69b_warning', { rfc: c.tax_id, name: c.name, situation: t(`l69b_${c.situation}`) }))),
    // The deduction is the receiver's: the note is for invoices the entity received.
    c.situation === 'definitive' && inv.direction === 'received' ? h('p', null, t('l69b_definitive_note')) : null,
    publications(c),
    h('p', { class: 'muted' }, tf('l69b_version', { version: c.list_version })));
}

/** Both directions of the invoice's CFDI relations, each with the other document when held. */
function relationsTable(rel) {
  const rows = [...(rel.relates_to || []).map((r) => ['rel_names', r]), ...(rel.related_by || []).map((r) => ['rel_named_by', r])];
  if (rows.length === 0) return h('p', { class: 'muted' }, t('no_results'));
  return table(
    [[t('rel_side')], [t('rel_kind')], [t('uuid')], [t('type')], [t('total'), 'num'], [t('status')]],
    rows.map(([side, r]) => {
      const o = r.invoice;
      return h('tr', null, h('td', null, t(side)),
        h('td', null, label('c_TipoRelacion', r.relation_type)),
        h('td', null, o ? h('a', { href: `#/invoices/${o.id}` }, r.uuid) : [h('code', null, r.uuid), ' ', h('span', { class: 'muted' }, t('rel_not_held'))]),
        h('td', null, o ? o.type : '—'), h('td', { class: 'num' }, o ? money(o.total, o.currency) : '—'),
        h('td', null, o ? badge(o.status) : '—'));
    }));
}

export function render(main, id) {
  const timers = new Set();
  const body = h('div');
  main.replaceChildren(h('p', null, h('a', { href: '#/invoices' }, `← ${t('back')}`)), h('h1', null, t('invoice')), body);
  (async () => {
    try {
      const [inv, pays] = await Promise.all([
        api('GET', `/v1/invoices/${encodeURIComponent(id)}`),
        api('GET', `/v1/invoices/${encodeURIComponent(id)}/payments?limit=500`),
      ]);
      main.querySelector('h1').textContent = plain(`${t('invoice')} ${[inv.series, inv.folio].filter(Boolean).join('-') || inv.uuid}`);
      const cur = inv.currency;
      const ed = editionOf(inv.version);
      const rel = inv.relations || {};
      await describe([
        ['c_TipoDeComprobante', inv.type, ed], ['c_FormaPago', inv.payment_form, ed], ['c_MetodoPago', inv.payment_method, ed],
        ['c_UsoCFDI', inv.receiver.cfdi_use, ed], ['c_RegimenFiscal', inv.issuer.tax_regime, ed], ['c_Moneda', cur, ed],
        ...(inv.items || []).flatMap((it) => [['c_ClaveProdServ', it.product_code, ed], ['c_ClaveUnidad', it.unit, ed]]),
        ...(inv.payments || []).map((p) => ['c_FormaPago', p.payment_form, ed]),
        ...[...(rel.relates_to || []), ...(rel.related_by || [])].map((r) => ['c_TipoRelacion', r.relation_type, ed]),
      ]);
      // Without the SAT's PDF the API answers 404, as its contract says; `render=true`
      // asks for one printed from the XML.
      const dl = async (format, render) => {
        try {
          await download(`/v1/invoices/${inv.id}/cfdi?format=${format}${render ? '&render=true' : ''}`, `${inv.uuid}.${format}`);
          flash(`${t('downloaded')}: ${inv.uuid}.${format}`);
        } catch (e) { if (e.status !== 401) flash(failure(e), 'error'); }
      };
      body.replaceChildren(...[
        h('div', { class: 'actions' },
          h('button', { type: 'button', id: 'download-xml', onclick: () => dl('xml') }, t('download_xml')),
          inv.has_pdf ? h('button', { type: 'button', id: 'download-pdf', class: 'secondary', onclick: () => dl('pdf') }, t('download_pdf'))
            : [h('button', { type: 'button', id: 'download-rendered-pdf', class: 'secondary', onclick: () => dl('pdf', true) }, t('download_rendered_pdf')),
              h('span', { class: 'muted' }, t('no_pdf'))]),
        props([
          [t('uuid'), h('code', null, inv.uuid)], [t('status'), badge(inv.status)], [t('type'), `${label('c_TipoDeComprobante', inv.type, ed)} (CFDI ${inv.version})`],
          [t('direction'), t(inv.direction)], [t('issued_at'), satDate(inv.issued_at)], [t('certified_at'), satDate(inv.certified_at)],
          [t('issuer'), `${inv.issuer.tax_id} · ${inv.issuer.name || ''}`], [t('tax_regime'), label('c_RegimenFiscal', inv.issuer.tax_regime, ed)],
          [t('receiver'), `${inv.receiver.tax_id} · ${inv.receiver.name || ''}`], [t('cfdi_use'), label('c_UsoCFDI', inv.receiver.cfdi_use, ed)],
          [t('currency'), label('c_Moneda', cur, ed)], [t('exchange_rate'), inv.exchange_rate],
          [t('payment_method'), label('c_MetodoPago', inv.payment_method, ed)], [t('payment_form'), label('c_FormaPago', inv.payment_form, ed)],
          [t('cancelled'), inv.cancelled_at ? satDate(inv.cancelled_at) : undefined],
          [t('created_at'), `${timestamp(inv.created_at, lang())} (${t('mx_time')})`],
        ]),
        inv.payment_conflicts ? h('p', { class: 'error' }, t('conflicts')) : null,
        list69b(inv),
        ...sealSection(inv.seal),
        satSection(inv, timers),
        h('h2', null, t('taxes')),
        props([[t('subtotal'), money(inv.subtotal, cur)], [t('discount'), money(inv.discount, cur)],
          [t('taxes_transferred'), money(inv.taxes_transferred, cur)], [t('taxes_withheld'), money(inv.taxes_withheld, cur)],
          [t('total'), h('strong', { id: 'invoice-total' }, money(inv.total, cur))], [t('paid'), h('span', { id: 'invoice-paid' }, money(inv.paid_amount, cur))], [t('due'), money(inv.due_amount, cur)],
          [t('credited'), money(inv.credited_amount, cur)], [t('balance_after_credits'), h('span', { id: 'invoice-left' }, money(inv.balance_after_credits, cur))]]),
        h('h2', null, t('concepts')),
        inv.items_truncated ? h('p', { class: 'muted' }, t('items_truncated')) : null,
        table([[t('product_code')], [t('description')], [t('quantity'), 'num'], [t('unit')], [t('unit_price'), 'num'], [t('discount'), 'num'], [t('amount'), 'num']],
          (inv.items || []).map((it) => h('tr', null, h('td', null, label('c_ClaveProdServ', it.product_code, ed)), h('td', { class: 'user' }, it.description), h('td', { class: 'num' }, it.quantity),
            h('td', null, label('c_ClaveUnidad', it.unit, ed)), h('td', { class: 'num' }, money(it.unit_price, cur)), h('td', { class: 'num' }, money(it.discount, cur)),
            h('td', { class: 'num' }, money(it.amount, cur))))),
        (inv.payments || []).length ? [h('h2', null, t('payments_in')), ...inv.payments.map((p) => h('section', { class: 'panel' },
          props([[t('paid_at'), satDate(p.paid_at)], [t('payment_form'), label('c_FormaPago', p.payment_form, ed)], [t('amount'), money(p.amount, p.currency)]]),
          h('h3', null, t('related')), relatedTable(p.related_documents || [])))] : null,
        h('h2', null, t('relations')),
        inv.relations_truncated ? h('p', { class: 'muted' }, tf('relations_truncated', {
          names: (inv.relations_count || {}).relates_to, named_by: (inv.relations_count || {}).related_by })) : null,
        relationsTable(inv.relations || {}),
        h('h2', null, t('payments')),
        pays.data.length === 0 ? h('p', { class: 'muted' }, t('no_results')) : table(
          [[t('paid_at')], [t('uuid')], [t('installment'), 'num'], [t('previous_balance'), 'num'], [t('amount_paid'), 'num'], [t('outstanding_balance'), 'num'], [t('status')]],
          pays.data.map((p) => h('tr', null, h('td', null, satDate(p.paid_at)),
            h('td', null, h('a', { href: `#/invoices/${p.payment_invoice_id}` }, p.payment_uuid)),
            h('td', { class: 'num' }, p.installment ?? '—'), h('td', { class: 'num' }, money(p.previous_balance, p.currency)),
            h('td', { class: 'num' }, money(p.amount_paid, p.currency)), h('td', { class: 'num' }, money(p.outstanding_balance, p.currency)),
            h('td', null, badge(p.cancelled ? 'cancelled' : 'active'))))),
      ].flat().filter(Boolean));
    } catch (e) {
      if (e.status !== 401) body.replaceChildren(errorBox(e.status === 404 ? { message: t('not_found') } : e));
    }
  })();
  return () => timers.forEach((timer) => clearTimeout(timer));
}
