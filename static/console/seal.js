// A document's seal verification (`seal`: seven checks, each valid, invalid or
// unverified): its badge for the lists, and its section for the detail pages, each
// check in words with the server's reason beside it.
import { t } from './i18n.js';
import { h, table } from './dom.js';

const CHECKS = ['issuer_seal', 'certificate_number', 'certificate_rfc', 'certificate_validity',
  'certificate_issuer', 'stamp_seal_cfd', 'sat_seal'];

/** The seal's status as a badge; a document not verified yet says so. */
export function sealBadge(seal) {
  const status = seal ? seal.status : 'pending';
  return h('span', { class: `badge s-seal-${status}`, 'data-seal': status }, t(`seal_${status}`));
}

/** The seal section of a detail page: the badge, what it means, and every check. */
export function sealSection(seal) {
  const head = h('h2', { id: 'seal-h' }, t('seal_h'));
  if (!seal) return [head, h('p', { id: 'seal' }, sealBadge(null), ' ', t('seal_pending_note'))];
  const rows = CHECKS.map((name) => {
    const check = seal.checks[name];
    const explained = check.status === 'valid' ? '' : t(`seal_${name}_${check.status}`);
    return h('tr', { 'data-check': name },
      h('td', null, t(`seal_${name}`)),
      h('td', null, h('span', { class: `badge s-seal-${check.status}` }, t(`seal_check_${check.status}`))),
      h('td', null, explained, check.reason ? h('div', { class: 'muted', lang: 'en' }, `${t('seal_detail')}: ${check.reason}`) : null));
  });
  return [head,
    h('p', { id: 'seal' }, sealBadge(seal), ' ', t(`seal_${seal.status}_note`)),
    table([[t('seal_check')], [t('status')], [t('seal_reason')]], rows)];
}
