// The console's shell: sign-in, navigation and hash routing (#/entities, #/invoices/ID,
// #/retentions/ID...).
// Each view module exports `render(main, arg)` and may return a function that stops its
// polling when the view is left.
import { t, lang, setLang } from './i18n.js';
import { signedIn, signIn, signOut } from './api.js';
import { h, flash } from './dom.js';
import * as entities from './entities.js';
import * as extractions from './extractions.js';
import * as invoices from './invoices.js';
import * as invoice from './invoice.js';
import * as month from './month.js';
import * as retentions from './retentions.js';
import * as retention from './retention.js';
import * as schedules from './schedules.js';
import * as summary from './summary.js';
import * as webhooks from './webhooks.js';

const SECTIONS = [['entities', entities], ['extractions', extractions], ['schedules', schedules], ['invoices', invoices], ['retentions', retentions], ['summary', summary], ['month', month], ['webhooks', webhooks]];
const main = document.getElementById('main');
let stop = null;

function chrome(section) {
  document.documentElement.lang = lang();
  document.querySelector('.skip').textContent = t('skip');
  const nav = document.getElementById('nav');
  nav.setAttribute('aria-label', t('nav'));
  nav.replaceChildren(...(signedIn() ? SECTIONS.map(([name]) => h('a', {
    href: `#/${name}`, 'aria-current': name === section ? 'page' : false,
  }, t(name))) : []));
  document.getElementById('lang').textContent = t('lang_switch');
  const out = document.getElementById('signout');
  out.textContent = t('signout');
  out.hidden = !signedIn();
  document.title = `${t(section || 'page_title')} · cfdi-extract`;
}

function signInView(message) {
  const err = h('div', { id: 'signin-error' });
  if (message) err.append(h('p', { class: 'error', role: 'alert' }, message));
  const form = h('form', { class: 'narrow', 'aria-describedby': 'signin-error' },
    h('label', null, t('email'), h('input', { name: 'email', type: 'email', autocomplete: 'username', required: true })),
    h('label', null, t('password'), h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true })),
    h('button', { type: 'submit' }, t('signin')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const btn = form.querySelector('button');
    btn.disabled = true;
    err.replaceChildren();
    try {
      await signIn(form.email.value.trim(), form.password.value);
      flash('');
      if (!location.hash || location.hash === '#/signin') location.hash = '#/entities';
      else route();
    } catch (e) {
      err.replaceChildren(h('p', { class: 'error', role: 'alert' }, e.status === 401 ? t('bad_credentials') : e.status === 0 ? t('network_error') : e.message));
      btn.disabled = false;
      form.password.focus();
    }
  });
  main.replaceChildren(h('section', { class: 'signin' }, h('h1', { tabindex: '-1' }, t('signin_title')), err, form));
  form.email.focus();
}

function route() {
  if (stop) { stop(); stop = null; }
  const [, section = 'entities', arg] = (location.hash || '#/entities').split('/');
  if (!signedIn()) {
    chrome(null);
    signInView();
    return;
  }
  const details = { invoices: invoice, retentions: retention };
  const view = (arg && details[section]) || (SECTIONS.find(([n]) => n === section) || SECTIONS[0])[1];
  chrome(section);
  main.replaceChildren(h('p', { class: 'muted' }, t('loading')));
  stop = view.render(main, arg && decodeURIComponent(arg)) || null;
  const h1 = main.querySelector('h1');
  if (h1) { h1.tabIndex = -1; h1.focus(); }
}

document.getElementById('lang').addEventListener('click', () => {
  setLang(lang() === 'es-MX' ? 'en' : 'es-MX');
  route();
  document.getElementById('lang').focus();
});
document.getElementById('signout').addEventListener('click', () => {
  signOut();
  // replaceState: no hashchange, which would clear the message below.
  history.replaceState(null, '', '#/signin');
  route();
  flash(t('signed_out'));
});
window.addEventListener('cfdi:unauthorized', () => {
  if (stop) { stop(); stop = null; }
  chrome(null);
  signInView(t('session_expired'));
});
window.addEventListener('hashchange', () => {
  flash('');
  route();
});
route();
