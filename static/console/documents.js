// What the invoice and retention pages share, written once: a document class's list
// with its filters and cursor paging (only the latest request draws), and the
// spreadsheet export of everything the applied filters find. Each class's page gives
// its path, columns, row, filter fields and export row kinds; the filters and page
// survive a visit to a document's detail (the class's module state).
import { t } from './i18n.js';
import { api, download, withQuery } from './api.js';
import { h, select, table, errorBox, flash, values, filtering } from './dom.js';
import { allEntities } from './entities.js';

const PAGE = 50;

/** The export form: one row kind or several (`exports`: [value, label, path, file stem]). */
function exportForm(cls, state) {
  const form = h('form', { class: 'grid', id: `${cls.id}-export`, 'aria-labelledby': `${cls.id}-export-h` },
    h('h2', { id: `${cls.id}-export-h`, class: 'span' }, cls.exportTitle),
    cls.exports.length > 1 ? select(t('export_rows'), 'rows', cls.exports.map(([v, label]) => [v, label]), cls.exports[0][0]) : null,
    select(t('export_format'), 'format', [['csv', 'CSV'], ['xlsx', 'XLSX (Excel)']], 'csv'),
    h('div', null, h('button', { type: 'submit', class: 'secondary' }, t('export_download'))));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const { rows, format } = values(form);
    const [, , path, stem] = cls.exports.find(([v]) => v === rows) || cls.exports[0];
    const name = `${stem}.${format}`;
    const button = form.querySelector('button');
    button.disabled = true;
    try {
      await download(withQuery(path, { ...state.filters, format }), name);
      flash(`${t('downloaded')}: ${name}`);
    } catch (e) { if (e.status !== 401) flash(e.message, 'error'); } finally { button.disabled = false; }
  });
  return form;
}

/**
 * Draws a class's list page into `main`. `cls`: { id, title, hint?, path, state,
 * columns: [[label, class?]...], row(doc), filters(entities, current) -> [fields...],
 * exportTitle, exports: [[value, label, path, stem]...] }.
 */
export function renderList(main, cls) {
  const { state } = cls;
  const err = h('div');
  const results = h('div', { 'aria-live': 'polite' });
  const formSlot = h('div');
  const exportSlot = h('div');
  main.replaceChildren(h('h1', null, cls.title), cls.hint ? h('p', { class: 'muted' }, cls.hint) : '',
    err, formSlot, exportSlot, results);

  // Only the latest request draws: an earlier one answering late (a click on Clear, then
  // Filter) must not replace the newer page.
  let latest = 0;
  const load = async () => {
    const mine = latest += 1;
    results.replaceChildren(h('p', { class: 'muted' }, t('loading')));
    try {
      const cursor = state.cursors[state.cursors.length - 1];
      const page = await api('GET', withQuery(cls.path, { ...state.filters, limit: PAGE, cursor }));
      if (mine !== latest) return;
      const nav = h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'secondary', disabled: state.cursors.length < 2, onclick: () => { state.cursors.pop(); load(); } }, t('prev_page')),
        h('button', { type: 'button', class: 'secondary', disabled: !page.next_cursor, onclick: () => { state.cursors.push(page.next_cursor); load(); } }, t('next_page')));
      results.replaceChildren(page.data.length === 0 ? h('p', null, t('no_results')) : table(cls.columns, page.data.map(cls.row)), nav);
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
    const form = h('form', { class: 'grid', id: `${cls.id}-filters`, role: 'search' },
      ...cls.filters(list, state.filters),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, t('filter')),
        h('button', { type: 'reset', class: 'secondary' }, t('clear'))));
    filtering(form, state, load);
    formSlot.replaceChildren(form);
    exportSlot.replaceChildren(exportForm(cls, state));
  })();
  return null;
}
