// Extractions: start one for a period and watch its progress (polled while shown).
import { t, tf, lang } from './i18n.js';
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

/**
 * Why a pending run has not started, in words: a run of the same taxpayer created
 * before it goes first (one at a time, in creation order); the taxpayer's CIEC is still
 * being checked (without a valid e.firma, the run fails if it still is when its turn
 * comes); or every worker is busy.
 */
function pendingWhy(x, runs, entities) {
  const ahead = runs.find((o) => o.entity_id === x.entity_id && o.id !== x.id
    && (o.status === 'pending' || o.status === 'running')
    && (o.created_at < x.created_at || (o.created_at === x.created_at && o.id < x.id)));
  if (ahead) return t('waits_previous');
  const e = entities.get(x.entity_id);
  const efirma = e && e.efirma && e.efirma.status === 'valid';
  if (e && e.credential_status === 'pending' && !efirma) return t('waits_credential');
  return t('waits_worker');
}

/** Why an ended run processed fewer than it found (`unprocessed` of its single read). */
function unprocessedWhy(x, u) {
  const parts = [];
  if (u.stored_before !== '0') parts.push(tf('unprocessed_stored_before', { n: u.stored_before }));
  if (u.awaiting_xml !== '0') parts.push(tf('unprocessed_awaiting_xml', { n: u.awaiting_xml }));
  if (u.conflicting !== '0') parts.push(tf('unprocessed_conflicting', { n: u.conflicting }));
  return h('div', { class: 'muted why' },
    `${tf('unprocessed_intro', { processed: x.invoices_processed, found: x.invoices_found })} ${parts.join('; ')}.`);
}

/** The status cell: a waiting run shows "waiting at the SAT" rather than "running"; a
 *  pending one why it waits; a failed one its reason. */
function statusCell(x, waiting, why) {
  const reason = x.failed_reason ? h('div', null, `${t('reason')}: ${t(`reason_${x.failed_reason}`)}`) : null;
  if (waiting) return h('td', { class: 'status' }, badge('waiting'), waitingInfo(waiting));
  return h('td', { class: 'status' }, badge(x.status), reason, why);
}

export function render(main, preselect) {
  const err = h('div');
  const rows = h('div', { 'aria-live': 'polite' });
  const formSlot = h('div');
  main.replaceChildren(h('h1', null, t('extractions')),
    h('section', { 'aria-labelledby': 'new-h' }, h('h2', { id: 'new-h' }, t('new_extraction')), err, formSlot),
    h('h2', null, t('extractions')), h('p', { class: 'muted' }, `${t('live_hint')} (${t('mx_time')})`), rows);

  let entities = new Map();
  let drawn = '';
  // The single reads of ended runs that processed fewer than they found: what they say
  // does not change until a later run completes their period, so each is read once per
  // visit.
  const ended = new Map();
  const load = async () => {
    try {
      const page = await api('GET', '/v1/extractions?limit=20');
      // The list omits `waiting` and `unprocessed`: they are read per run that has them.
      const running = page.data.filter((x) => x.status === 'running' && x.channel === 'efirma');
      const short = page.data.filter((x) => (x.status === 'finished' || x.status === 'failed')
        && Number(x.invoices_found) > Number(x.invoices_processed) && !ended.has(x.id));
      const [details] = await Promise.all([
        Promise.all(running.map((x) => api('GET', `/v1/extractions/${x.id}`))),
        Promise.all(short.map(async (x) => ended.set(x.id, await api('GET', `/v1/extractions/${x.id}`)))),
      ]);
      const waiting = new Map(details.map((d) => [d.id, d.waiting]));
      const pending = page.data.filter((x) => x.status === 'pending');
      // A taxpayer's credential may have been checked meanwhile.
      if (pending.length) entities = new Map((await allEntities()).map((e) => [e.id, e]));
      const why = new Map(pending.map((x) => [x.id, h('div', { class: 'muted why' }, pendingWhy(x, page.data, entities))]));
      page.data.forEach((x) => {
        const detail = ended.get(x.id);
        if (detail && detail.unprocessed && Number(x.invoices_found) > Number(x.invoices_processed)) {
          why.set(x.id, unprocessedWhy(x, detail.unprocessed));
        }
      });
      // Redraw only on a change: the live region would otherwise be read out every poll.
      const now = JSON.stringify([page.data, details, [...why].map(([id, el]) => [id, el.textContent]), lang()]);
      if (now === drawn) return;
      drawn = now;
      rows.replaceChildren(table(
        [[t('entity')], [t('period')], [t('download_type')], [t('status')], [t('found'), 'num'], [t('processed'), 'num'], [t('created_at')], [t('finished_at')]],
        page.data.map((x) => {
          const e = entities.get(x.entity_id);
          return h('tr', { 'data-extraction': x.id },
            h('td', { class: 'user' }, e ? `${e.tax_id} · ${e.name}` : x.entity_id),
            h('td', null, `${satDate(x.options.period.from)} – ${satDate(x.options.period.to)}`),
            h('td', null, t(x.options.download_type),
              x.options.document_class === 'retentions' ? h('div', { class: 'muted' }, t('retentions')) : null,
              x.channel ? h('div', { class: 'muted' }, `${t('channel')}: ${t(`channel_${x.channel}`)}`) : null,
              x.schedule_id ? h('div', { class: 'muted' }, t('scheduled_run')) : null),
            statusCell(x, waiting.get(x.id), why.get(x.id)),
            h('td', { class: 'num' }, x.invoices_found),
            h('td', { class: 'num' }, x.invoices_processed),
            h('td', null, timestamp(x.created_at, lang())), h('td', null, timestamp(x.finished_at, lang())));
        }),
      ));
    } catch (e) {
      drawn = '';
      if (e.status !== 401) rows.replaceChildren(errorBox(e));
    }
  };

  (async () => {
    try {
      const list = await allEntities();
      entities = new Map(list.map((e) => [e.id, e]));
      const today = new Date();
      const monthStart = `${mxDate(today).slice(0, 8)}01`;
      const form = h('form', { class: 'grid', id: 'new-extraction' },
        select(t('entity'), 'entity_id', entityOptions(list), preselect),
        field(t('from'), { name: 'from', type: 'date', required: true, value: monthStart }),
        field(t('to'), { name: 'to', type: 'date', required: true, value: mxDate(today) }),
        select(t('download_type'), 'download_type', [['issued', t('issued')], ['received', t('received')], ['both', t('both_directions')]], 'issued'),
        select(t('document_class'), 'document_class', [['invoices', t('invoices')], ['retentions', t('retentions')]], 'invoices'),
        h('div', null, h('button', { type: 'submit' }, t('start'))));
      form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        err.replaceChildren();
        const v = values(form);
        // Both directions are two runs, issued first; the second is asked for only
        // once the first is created, and a failure says which one was.
        const directions = v.download_type === 'both' ? ['issued', 'received'] : [v.download_type];
        const made = [];
        try {
          for (const direction of directions) {
            await api('POST', '/v1/extractions', {
              entity_id: v.entity_id,
              options: { period: { from: v.from, to: v.to }, download_type: direction, document_class: v.document_class },
            });
            made.push(direction);
          }
          flash(directions.length > 1 ? t('created_both') : t('created'));
          await load();
        } catch (e) {
          const box = errorBox(e);
          if (made.length) box.prepend(h('p', null, tf('created_only', { direction: t(made[0]) })));
          err.replaceChildren(box);
          if (made.length) await load();
        }
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
