// Invoices: the list's filters and cursor paging, and the spreadsheet export of every
// invoice (or concept) the applied filters find. The filters and page survive a visit
// to an invoice's detail (module state), so "back" returns to the same page.
import { t } from './i18n.js';
import { api, download, withQuery } from './api.js';
import { h, badge, field, select, table, errorBox, flash, values, filtering } from './dom.js';
import { money, satDate } from './format.js';
import { allEntities, entityOptions } from './entities.js';
import { situationBadge } from './list_69b.js';

const PAGE = 50;
const state = { filters: {}, cursors: [''] };

/** The export of /docs/exports with the filters applied to the list (not the page). */
function exportForm() {
  const form = h('form', { class: 'grid', id: 'invoice-export', 'aria-labelledby': 'export-h' },
    h('h2', { id: 'export-h', class: 'span' }, t('export')),
    select(t('export_rows'), 'rows', [['invoices', t('export_invoices')], ['items', t('export_items')]], 'invoices'),
    select(t('export_format'), 'format', [['csv', 'CSV'], ['xlsx', 'XLSX (Excel)']], 'csv'),
    h('div', null, h('button', { type: 'submit', class: 'secondary' }, t('export_download'))));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const { rows, format } = values(form);
    const name = `${rows === 'items' ? 'invoice-items' : 'invoices'}.${format}`;
    const path = rows === 'items' ? '/v1/invoices/export/items' : '/v1/invoices/export';
    const button = form.querySelector('button');
    button.disabled = true;
    try {
      await download(withQuery(path, { ...state.filters, format }), name);
      flash(`${t('downloaded')}: ${name}`);
    } catch (e) { if (e.status !== 401) flash(e.message, 'error'); } finally { button.disabled = false; }
  });
  return form;
}

export function render(main) {
  const err = h('div');
  const results = h('div', { 'aria-live': 'polite' });
  const formSlot = h('div');
  const exportSlot = h('div');
  main.replaceChildren(h('h1', null, t('invoices')), err, formSlot, exportSlot, results);

  // Only the latest request draws: an earlier one answering late (a click on Clear, then
  // Filter) must not replace the newer page.
  let latest = 0;
  const load = async () => {
    const mine = latest += 1;
    results.replaceChildren(h('p', { class: 'muted' }, t('loading')));
    try {
      const cursor = state.cursors[state.cursors.length - 1];
      const page = await api('GET', withQuery('/v1/invoices', { ...state.filters, limit: PAGE, cursor }));
      if (mine !== latest) return;
      const nav = h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', disabled: state.cursors.length < 2, onclick: () => { state.cursors.pop(); load(); } }, t('prev_page')),
        h('button', { type: 'button', class: 'secondary', disabled: !page.next_cursor, onclick: () => { state.cursors.push(page.next_cursor); load(); } }, t('next_page')));
      results.replaceChildren(page.data.length === 0 ? h('p', null, t('no_results')) : table(
        [[t('issued_at')], [t('folio')], [t('type')], [t('issuer')], [t('receiver')], [t('total'), 'num'], [t('due'), 'num'], [t('status')]],
        page.data.map((i) => h('tr', { 'data-invoice': i.id },
          h('td', null, satDate(i.issued_at)),
          h('td', null, h('a', { href: `#/invoices/${i.id}`, title: i.uuid }, [i.series, i.folio].filter(Boolean).join('-') || i.uuid)),
          h('td', null, i.type),
          h('td', null, i.issuer.tax_id, h('div', { class: 'muted' }, i.issuer.name || '')),
          h('td', null, i.receiver.tax_id, h('div', { class: 'muted' }, i.receiver.name || '')),
          h('td', { class: 'num' }, money(i.total, i.currency)),
          h('td', { class: 'num' }, money(i.due_amount, i.currency)),
          h('td', null, badge(i.status), i.counterparty_69b
            ? h('div', null, situationBadge(i.counterparty_69b.situation)) : null))),
      ), nav);
    } catch (e) {
      if (e.status !== 401 && mine === latest) results.replaceChildren(errorBox(e));
    }
  };

  // The first page does not wait for the entity picker: on a large database it is what
  // the accountant came for (BENCHMARKS.md, the console's first page).
  load();
  (async () => {
    let list = [];
    try { list = await allEntities(); } catch (e) { if (e.status !== 401) err.replaceChildren(errorBox(e)); return; }
    const f = state.filters;
    const form = h('form', { class: 'grid', id: 'invoice-filters', role: 'search' },
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
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('filter')),
        h('button', { type: 'reset', class: 'secondary' }, t('clear'))));
    filtering(form, state, load);
    formSlot.replaceChildren(form);
    exportSlot.replaceChildren(exportForm());
  })();
  return null;
}
