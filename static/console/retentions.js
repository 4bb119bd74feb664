// Retentions (CFDI de Retenciones e Información de Pagos): the list's filters and cursor
// paging, and the spreadsheet export of every retention the applied filters find. Like
// invoices, the filters and page survive a visit to a retention's detail.
import { t } from './i18n.js';
import { api, download, withQuery } from './api.js';
import { h, badge, field, select, table, errorBox, flash, values, filtering } from './dom.js';
import { money, satDate } from './format.js';
import { allEntities, entityOptions } from './entities.js';

const PAGE = 50;
const state = { filters: {}, cursors: [''] };

/** `period_from` / `period_to` of the API from the form's month inputs. */
function query(filters) {
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== ''));
}

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

function exportForm() {
  const form = h('form', { class: 'grid', id: 'retention-export', 'aria-labelledby': 'retention-export-h' },
    h('h2', { id: 'retention-export-h', class: 'span' }, t('ret_export')),
    select(t('export_format'), 'format', [['csv', 'CSV'], ['xlsx', 'XLSX (Excel)']], 'csv'),
    h('div', null, h('button', { type: 'submit', class: 'secondary' }, t('export_download'))));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const { format } = values(form);
    const name = `retentions.${format}`;
    const button = form.querySelector('button');
    button.disabled = true;
    try {
      await download(withQuery('/v1/retentions/export', { ...query(state.filters), format }), name);
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
  main.replaceChildren(h('h1', null, t('retentions')), h('p', { class: 'muted' }, t('ret_hint')), err, formSlot, exportSlot, results);

  let latest = 0;
  const load = async () => {
    const mine = latest += 1;
    results.replaceChildren(h('p', { class: 'muted' }, t('loading')));
    try {
      const cursor = state.cursors[state.cursors.length - 1];
      const page = await api('GET', withQuery('/v1/retentions', { ...query(state.filters), limit: PAGE, cursor }));
      if (mine !== latest) return;
      const nav = h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', disabled: state.cursors.length < 2, onclick: () => { state.cursors.pop(); load(); } }, t('prev_page')),
        h('button', { type: 'button', class: 'secondary', disabled: !page.next_cursor, onclick: () => { state.cursors.push(page.next_cursor); load(); } }, t('next_page')));
      results.replaceChildren(page.data.length === 0 ? h('p', null, t('no_results')) : table(
        [[t('issued_at')], [t('ret_key')], [t('period')], [t('issuer')], [t('receiver')], [t('ret_operation'), 'num'], [t('ret_withheld'), 'num'], [t('status')]],
        page.data.map((r) => {
          const receiver = receiverOf(r);
          return h('tr', { 'data-retention': r.id },
            h('td', null, h('a', { href: `#/retentions/${r.id}`, title: r.uuid }, satDate(r.issued_at))),
            h('td', null, r.retention_key || '—', h('div', { class: 'muted' }, r.retention_description || '')),
            h('td', null, periodText(r.period)),
            h('td', null, r.issuer.tax_id, h('div', { class: 'muted' }, r.issuer.name || '')),
            h('td', null, receiver.tax_id, h('div', { class: 'muted' }, receiver.name)),
            h('td', { class: 'num' }, money(r.totals.operation, 'MXN')),
            h('td', { class: 'num' }, money(r.totals.withheld, 'MXN')),
            h('td', null, badge(r.status)));
        }),
      ), nav);
    } catch (e) {
      if (e.status !== 401 && mine === latest) results.replaceChildren(errorBox(e));
    }
  };

  load();
  (async () => {
    let list = [];
    try { list = await allEntities(); } catch (e) { if (e.status !== 401) err.replaceChildren(errorBox(e)); return; }
    const f = state.filters;
    const form = h('form', { class: 'grid', id: 'retention-filters', role: 'search' },
      select(t('entity'), 'entity_id', entityOptions(list, t('any')), f.entity_id || ''),
      select(t('direction'), 'direction', [['', t('any')], ['received', t('ret_received')], ['issued', t('ret_issued')]], f.direction || ''),
      field(t('ret_period_from'), { name: 'period_from', type: 'month', value: f.period_from || '', placeholder: 'AAAA-MM' }),
      field(t('ret_period_to'), { name: 'period_to', type: 'month', value: f.period_to || '', placeholder: 'AAAA-MM' }),
      field(t('ret_key'), { name: 'retention_key', value: f.retention_key || '', inputmode: 'numeric', autocomplete: 'off' }),
      field(t('ret_counterpart'), { name: 'counterpart_tax_id', value: f.counterpart_tax_id || '', autocomplete: 'off' }),
      select(t('status'), 'status', [['', t('any')], ['active', t('active')], ['cancelled', t('cancelled')]], f.status || ''),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('filter')),
        h('button', { type: 'reset', class: 'secondary' }, t('clear'))));
    filtering(form, state, load);
    formSlot.replaceChildren(form);
    exportSlot.replaceChildren(exportForm());
  })();
  return null;
}
