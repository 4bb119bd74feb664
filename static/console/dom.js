// A tiny element builder and shared widgets. Text always goes in as text nodes (never
// innerHTML), so data from invoices cannot inject markup.
import { t } from './i18n.js';
import { fieldLabel, fieldMessage, fieldRank, failure } from './errors.js';
import { download } from './api.js';

// Bidirectional controls (ALM, LRM, RLM, the embeddings, overrides and isolates): in a
// name or a description they would turn the text after them around (a U+202E name
// reads backwards), so every text shows them as their code points instead.
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** `value` as text, its bidirectional controls shown as `<U+202E>`. */
export function plain(value) {
  return String(value).replace(BIDI_CONTROLS, (c) => `<U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}>`);
}

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  Object.entries(attrs || {}).forEach(([k, v]) => {
    if (v === false || v === null || v === undefined) return;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  });
  children.flat().forEach((c) => {
    if (c === null || c === undefined || c === false) return;
    el.append(c instanceof Node ? c : document.createTextNode(plain(c)));
  });
  return el;
}

/** A status word as a coloured badge, translated. */
export function badge(status) {
  return h('span', { class: `badge s-${status}` }, t(status));
}

/** A labelled input; `attrs` go to the <input>. */
export function field(label, attrs) {
  return h('label', null, label, h('input', attrs));
}

/** A labelled select of `[value, text]` options. */
export function select(label, name, options, value) {
  return h('label', null, label, h('select', { name },
    options.map(([v, text]) => h('option', { value: v, selected: v === value }, text))));
}

/** A table in a wrapper that scrolls sideways when it is wider than the page; the
 * wrapper takes the keyboard focus so a keyboard user can scroll it too (WCAG 2.1.1). */
export function table(headers, rows, caption) {
  return h('div', { class: 'table-wrap', tabindex: '0', role: caption ? 'region' : null, 'aria-label': caption || null }, h('table', null,
    caption ? h('caption', { class: 'muted' }, caption) : null,
    h('thead', null, h('tr', null, headers.map(([text, cls]) => h('th', { scope: 'col', class: cls }, text)))),
    h('tbody', null, rows)));
}

/** The error of a failed call, readable in the console's language: a 422's messages by
 *  the label of their field (errors.js), else the failure's words. */
export function errorBox(err) {
  const box = h('div', { class: 'error', role: 'alert' });
  if (err && err.body && err.body.errors) {
    const fields = Object.entries(err.body.errors).sort(([a], [b]) => fieldRank(a) - fieldRank(b));
    box.append(h('ul', null, fields.map(([f, msgs]) => h('li', { 'data-field': f },
      `${fieldLabel(f)}: ${[].concat(msgs).map(fieldMessage).join('; ')}`))));
  } else if (err && err.status !== undefined) box.append(plain(failure(err)));
  else box.append(plain(err && err.message ? err.message : String(err)));
  return box;
}

/** Replaces the flash line (a polite live region) with a message. */
export function flash(message, kind = 'notice') {
  const el = document.getElementById('flash');
  el.replaceChildren(...(message ? [h('p', { class: kind }, message)] : []));
}

/** A button that downloads the file `request()` names (`{ url, name }`, the name for
 *  when the server gives none) and says so in the flash line; a failure shows in
 *  `slot`. Disabled while it downloads, so a double click fetches once. */
export function downloadButton(id, label, request, slot) {
  return h('button', { type: 'button', class: 'secondary', id, onclick: async (ev) => {
    const { url, name } = request();
    ev.target.disabled = true;
    try {
      flash(`${t('downloaded')}: ${await download(url, name)}`);
    } catch (e) { if (e.status !== 401) slot.replaceChildren(errorBox(e)); } finally { ev.target.disabled = false; }
  } }, label);
}

let confirmCount = 0;

/**
 * An in-page confirmation in the console's language (window.confirm would show the
 * browser's own buttons): the question and two buttons in `slot`. Focus starts on
 * Cancel, so a stray Enter never destroys anything; Escape or Cancel closes it and
 * returns focus to the control that opened it.
 */
export function confirmBox(slot, question, confirmLabel, onConfirm) {
  const opener = document.activeElement;
  const id = `confirm-${confirmCount += 1}`;
  const close = () => {
    slot.replaceChildren();
    if (opener && opener.isConnected) opener.focus();
  };
  const cancel = h('button', { type: 'button', class: 'secondary', onclick: close }, t('cancel'));
  const yes = h('button', {
    type: 'button', class: 'danger',
    onclick: async () => {
      yes.disabled = true;
      try { await onConfirm(); } finally { slot.replaceChildren(); }
    },
  }, confirmLabel);
  const box = h('div', { class: 'confirm', role: 'alertdialog', 'aria-labelledby': id },
    h('p', { id }, question), h('div', { class: 'actions' }, yes, cancel));
  box.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') close(); });
  slot.replaceChildren(box);
  cancel.focus();
}

/** Form values by name (unchecked boxes omitted). */
export function values(form) {
  const out = {};
  new FormData(form).forEach((v, k) => { if (typeof v === 'string') out[k] = v.trim(); });
  return out;
}

/** A list's filter form: submitting applies its values from the first page, clearing
 *  shows everything again (`state` keeps the filters and the page cursors). */
export function filtering(form, state, load) {
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.filters = values(form);
    state.cursors = [''];
    load();
  });
  form.addEventListener('reset', () => {
    state.filters = {};
    state.cursors = [''];
    setTimeout(() => { form.querySelectorAll('input').forEach((i) => { i.value = ''; }); load(); });
  });
}
