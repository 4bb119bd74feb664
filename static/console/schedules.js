// Schedules: keep a taxpayer in sync with extractions the service starts by itself
// (/docs/schedules). Create (daily at a Mexico City time, or every interval), pause,
// resume, delete.
import { t, lang } from './i18n.js';
import { api } from './api.js';
import { h, badge, field, select, table, errorBox, flash, confirmBox } from './dom.js';
import { timestamp } from './format.js';
import { allEntities, entityOptions } from './entities.js';

const DIRECTIONS = ['issued', 'received'];

function radio(name, value, label, checked) {
  return h('label', { class: 'check' }, h('input', { type: 'radio', name, value, checked }), label);
}

/** The request body of the form: exactly one of `daily_at` and `every`, as the API asks. */
function body(form) {
  const out = {
    entity_id: form.entity_id.value,
    directions: [...form.querySelectorAll('input[name=directions]:checked')].map((i) => i.value),
    lookback_days: Number(form.lookback_days.value),
  };
  if (form.timing.value === 'every') out.every = form.every.value.trim();
  else out.daily_at = form.daily_at.value;
  return out;
}

export function render(main) {
  const err = h('div');
  const rows = h('div', { 'aria-live': 'polite' });
  const formSlot = h('div');
  const confirmSlot = h('div');
  main.replaceChildren(h('h1', null, t('schedules')), h('p', { class: 'muted' }, t('schedules_hint')),
    h('section', { 'aria-labelledby': 'sch-add' }, h('h2', { id: 'sch-add' }, t('add_schedule')), err, formSlot),
    h('h2', null, t('schedules')), confirmSlot, rows);

  let names = new Map();
  const when = (v) => timestamp(v, lang());
  const act = async (call, message) => {
    err.replaceChildren();
    try { await call(); flash(message); await load(); } catch (e) { if (e.status !== 401) err.replaceChildren(errorBox(e)); }
  };
  const load = async () => {
    try {
      const page = await api('GET', '/v1/schedules?limit=100');
      rows.replaceChildren(page.data.length === 0 ? h('p', null, t('no_results')) : table(
        [[t('entity')], [t('frequency')], [t('directions')], [t('lookback_days'), 'num'], [t('status')],
          [`${t('next_run')} (${t('mx_time')})`], [`${t('last_run')} (${t('mx_time')})`], [t('actions')]],
        page.data.map((s) => {
          const who = names.get(s.entity_id) || s.entity_id;
          const paused = s.status === 'paused';
          return h('tr', { 'data-schedule': s.id },
            h('td', { class: 'user' }, who),
            h('td', null, s.daily_at ? `${t('daily_at')} ${s.daily_at} (${t('mx_time')})` : `${t('every')} ${s.every}`),
            h('td', null, s.directions.map((d) => t(d)).join(', ')),
            h('td', { class: 'num' }, s.lookback_days),
            h('td', null, badge(s.status), s.paused_reason ? h('div', { class: 'muted' }, t(`paused_${s.paused_reason}`)) : null),
            h('td', null, when(s.next_run_at)), h('td', null, when(s.last_run_at)),
            h('td', null, h('div', { class: 'actions' },
              h('button', {
                type: 'button', class: 'secondary', 'aria-label': `${t(paused ? 'resume' : 'pause')} ${who}`,
                onclick: () => act(() => api('PATCH', `/v1/schedules/${s.id}`, { status: paused ? 'active' : 'paused' }), t('saved')),
              }, t(paused ? 'resume' : 'pause')),
              h('button', {
                type: 'button', class: 'danger', 'aria-label': `${t('delete')} ${who}`,
                onclick: () => confirmBox(confirmSlot, t('confirm_delete_schedule').replace('{entity}', who), t('delete'),
                  () => act(() => api('DELETE', `/v1/schedules/${s.id}`), t('deleted'))),
              }, t('delete')))));
        })));
    } catch (e) { if (e.status !== 401) rows.replaceChildren(errorBox(e)); }
  };

  (async () => {
    try {
      const list = await allEntities();
      names = new Map(list.map((e) => [e.id, `${e.tax_id} · ${e.name}`]));
      const form = h('form', { class: 'grid', id: 'new-schedule' },
        select(t('entity'), 'entity_id', entityOptions(list)),
        h('fieldset', { class: 'timing' }, h('legend', null, t('frequency')),
          h('div', null, radio('timing', 'daily', t('daily'), true),
            field(`${t('daily_at')} (${t('mx_time')})`, { name: 'daily_at', type: 'time', value: '07:00' })),
          h('div', null, radio('timing', 'every', t('interval'), false),
            field(t('every_hint'), { name: 'every', autocomplete: 'off', placeholder: '6h', disabled: true }))),
        h('fieldset', null, h('legend', null, t('directions')),
          DIRECTIONS.map((d) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'directions', value: d, checked: true }), t(d)))),
        field(t('lookback_days'), { name: 'lookback_days', type: 'number', min: 1, max: 2190, value: 7, required: true }),
        h('div', null, h('button', { type: 'submit' }, t('add'))));
      // Only the chosen kind's field is enabled: the API takes exactly one of them.
      form.addEventListener('change', () => {
        form.daily_at.disabled = form.timing.value !== 'daily';
        form.every.disabled = form.timing.value !== 'every';
      });
      form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        act(() => api('POST', '/v1/schedules', body(form)), t('created'));
      });
      formSlot.replaceChildren(form);
      await load();
    } catch (e) { if (e.status !== 401) err.replaceChildren(errorBox(e)); }
  })();
  return null;
}
