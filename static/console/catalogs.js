// The SAT's catalogs as the API serves them (GET /v1/catalogs/{name}): every code an
// invoice or a retention carries is shown with its description, read from the service
// (never a copy kept here). Labels are fetched for the codes a page shows and kept for
// the session; a code the catalog does not know is shown as written.
import { api, withQuery } from './api.js';

// `catalog|edition` -> Map(code -> entry, or null when the catalog does not know it).
const loaded = new Map();
const CHUNK = 200;

function known(catalog, edition) {
  const k = `${catalog}|${edition}`;
  if (!loaded.has(k)) loaded.set(k, new Map());
  return loaded.get(k);
}

/** The catalogs' edition of a document's version: 4.0 (and RET 2.0) or 3.3. */
export function editionOf(version) {
  return version === '4.0' || version === '2.0' || !version ? '4.0' : '3.3';
}

/**
 * Fetches the entries of `codes` not fetched yet (each [catalog, code, edition?]),
 * a request per catalog; a failure leaves the codes as written.
 */
export async function describe(wanted) {
  const byCatalog = new Map();
  wanted.forEach(([catalog, code, edition = '4.0']) => {
    if (code === null || code === undefined || code === '') return;
    const k = `${catalog}|${edition}`;
    if (known(catalog, edition).has(String(code))) return;
    if (!byCatalog.has(k)) byCatalog.set(k, { catalog, edition, codes: new Set() });
    byCatalog.get(k).codes.add(String(code));
  });
  await Promise.all([...byCatalog.values()].map(async ({ catalog, edition, codes }) => {
    const list = [...codes];
    const map = known(catalog, edition);
    for (let i = 0; i < list.length; i += CHUNK) {
      const chunk = list.slice(i, i + CHUNK);
      try {
        const res = await api('GET', withQuery(`/v1/catalogs/${catalog}`, { codes: chunk.join(','), edition }));
        chunk.forEach((c) => { if (!map.has(c)) map.set(c, null); });
        res.data.forEach((e) => map.set(e.code, e));
      } catch (e) {
        if (e.status === 401) throw e;
        return;
      }
    }
  }));
}

/** Every entry of a (small) catalog, e.g. for a filter's options. */
export async function entries(catalog, edition = '4.0') {
  const res = await api('GET', withQuery(`/v1/catalogs/${catalog}`, { edition }));
  const map = known(catalog, edition);
  res.data.forEach((e) => map.set(e.code, e));
  return res.data;
}

/** `01 - Efectivo` once described, else the code as written (— when there is none). */
export function label(catalog, code, edition = '4.0') {
  if (code === null || code === undefined || code === '') return '—';
  const e = known(catalog, edition).get(String(code));
  return e ? e.label : String(code);
}

/** The description alone (without the code), or '' when the catalog does not know it. */
export function description(catalog, code, edition = '4.0') {
  const e = known(catalog, edition).get(String(code));
  if (!e || e.label === e.code) return '';
  return e.label.slice(e.code.length + 3);
}
