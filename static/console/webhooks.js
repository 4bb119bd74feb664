// Webhooks: list, create, delete, and a webhook's delivery log.
import { t, lang } from './i18n.js';
import { api } from './api.js';
import { h, badge, field, table, errorBox, flash, confirmBox } from './dom.js';
import { timestamp } from './format.js';

const EVENTS = ['extraction.update', 'entity.update', 'invoice.created', 'invoice.updated'];

export function render(main) {
  const err = h('div');
  const rows = h('div');
  const log = h('div');
  const created = h('div');
  const confirmSlot = h('div');
  const form = h('form', { class: 'grid', id: 'add-webhook' },
    field(t('url'), { name: 'url', type: 'url', required: true, placeholder: 'https://' }),
    h('fieldset', null, h('legend', null, t('events')),
      EVENTS.map((ev) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'events', value: ev, checked: true }), ev))),
    h('div', null, h('button', { type: 'submit' }, t('add'))));
  main.replaceChildren(h('h1', null, t('webhooks')),
    h('section', { 'aria-labelledby': 'wh-add' }, h('h2', { id: 'wh-add' }, t('add_webhook')), err, created, form),
    h('h2', null, t('webhooks')), confirmSlot, rows, log);

  const when = (v) => timestamp(v, lang());
  const deliveries = async (w) => {
    try {
      const page = await api('GET', `/v1/webhooks/${w.id}/deliveries?limit=100`);
      log.replaceChildren(h('section', { class: 'panel', 'aria-labelledby': 'dl-h' },
        h('h2', { id: 'dl-h', tabindex: '-1' }, `${t('deliveries')}: ${w.url}`),
        h('p', { class: 'muted' }, t('mx_time')),
        page.data.length === 0 ? h('p', null, t('no_results')) : table(
          [[t('event')], [t('status')], [t('attempts'), 'num'], [t('response'), 'num'], [t('last_error')], [t('last_attempt')], [t('created_at')]],
          page.data.map((d) => h('tr', null, h('td', null, d.event), h('td', null, badge(d.status)), h('td', { class: 'num' }, d.attempts),
            h('td', { class: 'num' }, d.response_status ?? '—'), h('td', null, d.last_error || '—'),
            h('td', null, when(d.last_attempt_at)), h('td', null, when(d.created_at)))))));
      log.querySelector('h2').focus();
    } catch (e) { if (e.status !== 401) log.replaceChildren(errorBox(e)); }
  };
  const load = async () => {
    try {
      const page = await api('GET', '/v1/webhooks?limit=100');
      rows.replaceChildren(page.data.length === 0 ? h('p', null, t('no_results')) : table(
        [[t('url')], [t('events')], [t('created_at')], [t('actions')]],
        page.data.map((w) => h('tr', null, h('td', null, h('code', null, w.url)), h('td', null, w.events.join(', ')),
          h('td', null, when(w.created_at)),
          h('td', null, h('div', { class: 'actions' },
            h('button', { type: 'button', class: 'secondary', onclick: () => deliveries(w) }, t('show_deliveries')),
            h('button', {
              type: 'button', class: 'danger', 'aria-label': `${t('delete')} ${w.url}`,
              onclick: () => confirmBox(confirmSlot, `${t('confirm_delete')} ${w.url}`, t('delete'), async () => {
                try { await api('DELETE', `/v1/webhooks/${w.id}`); flash(t('deleted')); log.replaceChildren(); await load(); } catch (e) { err.replaceChildren(errorBox(e)); }
              }),
            }, t('delete'))))))));
    } catch (e) { if (e.status !== 401) rows.replaceChildren(errorBox(e)); }
  };
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    err.replaceChildren();
    created.replaceChildren();
    const events = [...form.querySelectorAll('input[name=events]:checked')].map((i) => i.value);
    try {
      const w = await api('POST', '/v1/webhooks', { url: form.url.value.trim(), events });
      form.reset();
      created.replaceChildren(h('div', { class: 'notice' }, `${t('token_once')} `, h('code', null, w.token || '')));
      load();
    } catch (e) { err.replaceChildren(errorBox(e)); }
  });
  load();
  return null;
}
