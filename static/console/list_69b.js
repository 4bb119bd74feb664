// The SAT's 69-B list (/docs/list-69b) as the console shows an entry of it, the same on
// the invoice, the taxpayers and the summary pages: its situation and the stages the
// list published it in.
import { t, tf } from './i18n.js';
import { h } from './dom.js';

const STAGES = ['presumed', 'disproved', 'definitive', 'favorable_ruling'];

/** The box an entry goes in: presumed and definitive put a deduction at risk; a
 *  disproved one or a favorable ruling is shown for the record, without alarm. */
export function tone(situation) {
  return { definitive: 'error', presumed: 'warning' }[situation] || 'panel';
}

/** "69-B: definitivo", as a badge coloured like its box. */
export function situationBadge(situation) {
  return h('span', { class: `badge s-69b s-69b-${situation}`, title: t('l69b') }, `69-B: ${t(`l69b_${situation}`)}`);
}

/** Each stage the list published the entry in, with its dates; null when none has one. */
export function publications(entry) {
  const stages = STAGES.filter((s) => entry[s] && (entry[s].sat || entry[s].dof))
    .map((s) => h('li', null, tf('l69b_published', { stage: t(`l69b_${s}`), sat: entry[s].sat, dof: entry[s].dof })));
  return stages.length ? h('ul', { class: 'muted' }, stages) : null;
}
