// What the invoice and retention pages share, written once: a document class's list
// with its search and filters and cursor paging (only the latest request draws), the
// count and totals per currency of everything the filters match (GET <path>/totals),
// and the accountant's spreadsheet of it (layout=accountant). Each class's page gives
// its path, columns, row, filter fields, the codes its rows show (described through the
// catalogs), its totals' columns and its export row kinds; the filters and page survive
// a visit to a document's detail (the class's module state).
import { t, tf } from './i18n.js';
import { api, download, withQuery } from './api.js';
import { h, field, select, table, errorBox, flash, values, filtering } from './dom.js';
import { failure } from './errors.js';
import { money } from './format.js';
import { allEntities } from './entities.js';

const PAGE = 50;

/** "1,234" for a count the API wrote. */
function count(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The export form: one row kind or several (`exports`: [value, label, path]); the file
 *  is the accountant's layout, named by the server for whose and which documents. */
function exportForm(cls, state) {
  const form = h('form', { class: 'grid', id: `${cls.id}-export`, 'aria-labelledby': `${cls.id}-export-h` },
    h('h2', { id: `${cls.id}-export-h`, class: 'span' }, cls.exportTitle),
    h('p', { class: 'muted span' }, t('export_hint')),
    cls.exports.length > 1 ? select(t('export_rows'), 'rows', cls.exports.map(([v, label]) => [v, label]), cls.exports[0][0]) : null,
    select(t('export_format'), 'format', [['xlsx', 'XLSX (Excel)'], ['csv', 'CSV']], 'xlsx'),
    h('div', null, h('button', { type: 'submit', class: 'secondary' }, t('export_download'))));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const { rows, format } = values(form);
    const [, , path] = cls.exports.find(([v]) => v === rows) || cls.exports[0];
    const button = form.querySelector('button');
    button.disabled = true;
    try {
      const name = await download(withQuery(path, { ...state.filters, format, layout: 'accountant' }), `${cls.id}.${format}`);
      flash(`${t('downloaded')}: ${name}`);
    } catch (e) { if (e.status !== 401) flash(failure(e), 'error'); } finally { button.disabled = false; }
  });
  return form;
}

/** The count of what the filters match and its totals per currency. */
function totalsView(cls, totals) {
  const n = String(totals.count);
  const said = h('p', { id: `${cls.id}-count`, 'data-count': n },
    h('strong', null, tf(n === '1' ? 'matches_one' : 'matches_many', { n: count(n), noun: n === '1' ? cls.noun[0] : cls.noun[1] })));
  if (n === '0') return [said];
  return [said, table(
    [[t('currency')], [t('sum_count'), 'num'], ...cls.totals.map(([label]) => [label, 'num'])],
    totals.currencies.map((line) => h('tr', { 'data-currency': line.currency || '' },
      h('td', null, line.currency || '—'), h('td', { class: 'num' }, count(line.count)),
      cls.totals.map(([, key]) => h('td', { class: 'num', 'data-total': key }, money(line[key], line.currency))))),
    t('totals_caption'))];
}

/**
 * Draws a class's list page into `main`. `cls`: { id, title, hint?, path, state,
 * noun: [one, many], columns: [[label, class?]...], row(doc), codes(docs) -> the
 * [catalog, code, edition] its rows show, filters(entities, current) -> [fields...],
 * totals: [[label, key]...], exportTitle, exports: [[value, label, path]...] }.
 */
export function renderList(main, cls) {
  const { state } = cls;
  const err = h('div');
  const results = h('div', { 'aria-live': 'polite' });
  const summary = h('section', { id: `${cls.id}-totals`, class: 'totals', 'aria-live': 'polite', 'aria-labelledby': `${cls.id}-totals-h` });
  const formSlot = h('div');
  const exportSlot = h('div');
  main.replaceChildren(h('h1', null, cls.title), cls.hint ? h('p', { class: 'muted' }, cls.hint) : '',
    err, formSlot, summary, results, exportSlot);

  // Only the latest request draws: an earlier one answering late (a click on Clear, then
  // Filter) must not replace the newer page.
  let latest = 0;
  const load = async () => {
    const mine = latest += 1;
    results.replaceChildren(h('p', { class: 'muted' }, t('loading')));
    try {
      const cursor = state.cursors[state.cursors.length - 1];
      const page = await api('GET', withQuery(cls.path, { ...state.filters, limit: PAGE, cursor }));
      await cls.describe(page.data);
      if (mine !== latest) return;
      const nav = h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', disabled: state.cursors.length < 2, onclick: () => { state.cursors.pop(); load(); } }, t('prev_page')),
        h('button', { type: 'button', class: 'secondary', disabled: !page.next_cursor, onclick: () => { state.cursors.push(page.next_cursor); load(); } }, t('next_page')));
      results.replaceChildren(page.data.length === 0 ? h('p', null, t('no_results')) : table(cls.columns, page.data.map(cls.row)), nav);
    } catch (e) {
      if (e.status !== 401 && mine === latest) results.replaceChildren(errorBox(e));
    }
  };
  // The totals read every match: asked for when the filters change, not per page.
  let latestTotals = 0;
  const loadTotals = async () => {
    const mine = latestTotals += 1;
    const heading = h('h2', { id: `${cls.id}-totals-h` }, t('totals_h'));
    summary.replaceChildren(heading, h('p', { class: 'muted' }, t('totals_loading')));
    try {
      const totals = await api('GET', withQuery(`${cls.path}/totals`, state.filters));
      if (mine === latestTotals) summary.replaceChildren(heading, ...totalsView(cls, totals));
    } catch (e) {
      if (e.status !== 401 && mine === latestTotals) summary.replaceChildren(heading, errorBox(e));
    }
  };
  const reload = () => { load(); loadTotals(); };

  // The first page does not wait for the entity picker: on a large database it is what
  // the accountant came for (BENCHMARKS.md, the console's first page).
  reload();
  (async () => {
    let list = [];
    try { list = await allEntities(); } catch (e) { if (e.status !== 401) err.replaceChildren(errorBox(e)); return; }
    const form = h('form', { class: 'grid', id: `${cls.id}-filters`, role: 'search' },
      h('div', { class: 'span2' }, field(t('search'), {
        name: 'q', type: 'search', value: state.filters.q || '', autocomplete: 'off', maxlength: 100,
        'aria-describedby': `${cls.id}-search-hint`,
      }), h('span', { class: 'muted', id: `${cls.id}-search-hint` }, cls.searchHint)),
      ...(await cls.filters(list, state.filters)),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('filter')),
        h('button', { type: 'reset', class: 'secondary' }, t('clear'))));
    filtering(form, state, reload);
    formSlot.replaceChildren(form);
    exportSlot.replaceChildren(exportForm(cls, state));
  })();
  return null;
}
