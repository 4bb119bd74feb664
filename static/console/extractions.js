// Extractions: start one for a period and watch its progress (polled while shown).
import { t, lang } from './i18n.js';
import { api } from './api.js';
import { h, badge, field, select, table, errorBox, flash, values } from './dom.js';
import { satDate, timestamp } from './format.js';
import { allEntities, entityOptions } from './entities.js';

const POLL_MS = 2000;

/** YYYY-MM-DD of a Date in Mexico City (the SAT's calendar). */
function mxDate(d) {
  return new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Mexico_City' }).format(d);
}

/**
 * What a running e.firma extraction waits on at the SAT (`waiting` of GET
 * /v1/extractions/{id}), in words: which request, for which window, how many checks,
 * when the next one is (Mexico City time) and the SAT's last answer.
 */
function waitingInfo(w) {
  const parts = [
    `${t(`request_${w.kind}`)} ${satDate(w.window.from)} – ${satDate(w.window.to)}: ${t(`request_state_${w.state}`)}`,
    `${t('checks')}: ${w.checks}`,
  ];
  if (w.next_check_at) parts.push(`${t('next_check')} ${timestamp(w.next_check_at, lang())} (${t('mx_time')})`);
  if (w.sat_message) parts.push(`${t('sat_answer')}: ${w.sat_code ?? ''} ${w.sat_message}`.trim());
  return h('div', { class: 'waiting' }, h('div', null, parts.join(' · ')), h('div', { class: 'muted' }, t('waiting_hint')));
}

/** The status cell: a waiting run shows "waiting at the SAT" rather than "running". */
function statusCell(x, waiting) {
  const reason = x.failed_reason ? h('div', null, `${t('reason')}: ${t(`reason_${x.failed_reason}`)}`) : null;
  if (waiting) return h('td', { class: 'status' }, badge('waiting'), waitingInfo(waiting));
  return h('td', { class: 'status' }, badge(x.status), reason);
}

export function render(main, preselect) {
  const err = h('div');
  const rows = h('div', { 'aria-live': 'polite' });
  const formSlot = h('div');
  main.replaceChildren(h('h1', null, t('extractions')),
    h('section', { 'aria-labelledby': 'new-h' }, h('h2', { id: 'new-h' }, t('new_extraction')), err, formSlot),
    h('h2', null, t('extractions')), h('p', { class: 'muted' }, `${t('live_hint')} (${t('mx_time')})`), rows);

  let names = new Map();
  let drawn = '';
  const load = async () => {
    try {
      const page = await api('GET', '/v1/extractions?limit=20');
      // The list omits `waiting`: it is read per running extraction.
      const running = page.data.filter((x) => x.status === 'running' && x.channel === 'efirma');
      const details = await Promise.all(running.map((x) => api('GET', `/v1/extractions/${x.id}`)));
      const waiting = new Map(details.map((d) => [d.id, d.waiting]));
      // Redraw only on a change: the live region would otherwise be read out every poll.
      const now = JSON.stringify([page.data, details, lang()]);
      if (now === drawn) return;
      drawn = now;
      rows.replaceChildren(table(
        [[t('entity')], [t('period')], [t('download_type')], [t('status')], [t('found'), 'num'], [t('processed'), 'num'], [t('created_at')], [t('finished_at')]],
        page.data.map((x) => h('tr', { 'data-extraction': x.id },
          h('td', { class: 'user' }, names.get(x.entity_id) || x.entity_id),
          h('td', null, `${x.options.period.from} – ${x.options.period.to}`),
          h('td', null, t(x.options.download_type),
            x.options.document_class === 'retentions' ? h('div', { class: 'muted' }, t('retentions')) : null,
            x.channel ? h('div', { class: 'muted' }, `${t('channel')}: ${t(`channel_${x.channel}`)}`) : null,
            x.schedule_id ? h('div', { class: 'muted' }, t('scheduled_run')) : null),
          statusCell(x, waiting.get(x.id)),
          h('td', { class: 'num' }, x.invoices_found), h('td', { class: 'num' }, x.invoices_processed),
          h('td', null, timestamp(x.created_at, lang())), h('td', null, timestamp(x.finished_at, lang())))),
      ));
    } catch (e) {
      drawn = '';
      if (e.status !== 401) rows.replaceChildren(errorBox(e));
    }
  };

  (async () => {
    try {
      const list = await allEntities();
      names = new Map(list.map((e) => [e.id, `${e.tax_id} · ${e.name}`]));
      const today = new Date();
      const monthStart = `${mxDate(today).slice(0, 8)}01`;
      const form = h('form', { class: 'grid', id: 'new-extraction' },
        select(t('entity'), 'entity_id', entityOptions(list), preselect),
        field(t('from'), { name: 'from', type: 'date', required: true, value: monthStart }),
        field(t('to'), { name: 'to', type: 'date', required: true, value: mxDate(today) }),
        select(t('download_type'), 'download_type', [['issued', t('issued')], ['received', t('received')]], 'issued'),
        select(t('document_class'), 'document_class', [['invoices', t('invoices')], ['retentions', t('retentions')]], 'invoices'),
        h('div', null, h('button', { type: 'submit' }, t('start'))));
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        err.replaceChildren();
        const v = values(form);
        try {
          await api('POST', '/v1/extractions', {
            entity_id: v.entity_id,
            options: { period: { from: v.from, to: v.to }, download_type: v.download_type, document_class: v.document_class },
          });
          flash(t('created'));
          await load();
        } catch (e) { err.replaceChildren(errorBox(e)); }
      });
      formSlot.replaceChildren(form);
      await load();
    } catch (e) {
      if (e.status !== 401) err.replaceChildren(errorBox(e));
    }
  })();
  const timer = setInterval(load, POLL_MS);
  return () => clearInterval(timer);
}
