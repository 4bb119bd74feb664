// The /v1 API with HTTP Basic. The credentials live in sessionStorage only (gone when the
// tab closes), are sent in the Authorization header, never in a URL, and `credentials:
// 'omit'` keeps cookies out and stops the browser's own login prompt on a 401.
import { parseJson } from './format.js';

const KEY = 'cfdi.basic';

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export function signedIn() {
  return !!sessionStorage.getItem(KEY);
}
export function signOut() {
  sessionStorage.removeItem(KEY);
}

function basic(email, password) {
  const bytes = new TextEncoder().encode(`${email}:${password}`);
  let bin = '';
  bytes.forEach((b) => { bin += String.fromCharCode(b); });
  return `Basic ${btoa(bin)}`;
}

async function send(method, path, body, auth) {
  const headers = { Authorization: auth, Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method, headers, credentials: 'omit', cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, null);
  }
  return res;
}

async function decode(res) {
  const text = await res.text();
  let body = null;
  if (text) {
    try { body = parseJson(text); } catch (e) { body = { message: text.slice(0, 200) }; }
  }
  if (!res.ok) {
    if (res.status === 401) {
      signOut();
      window.dispatchEvent(new CustomEvent('cfdi:unauthorized'));
    }
    throw new ApiError(res.status, body);
  }
  return body;
}

/** Checks the credentials with a cheap read; keeps them only if the server accepts them. */
export async function signIn(email, password) {
  const auth = basic(email, password);
  const res = await send('GET', '/v1/entities?limit=1', undefined, auth);
  if (res.status === 401) throw new ApiError(401, null);
  await decode(res);
  sessionStorage.setItem(KEY, auth);
}

export async function api(method, path, body) {
  const res = await send(method, path, body, sessionStorage.getItem(KEY) || '');
  return decode(res);
}

/** `path` with the non-empty entries of `params` as its query string. */
export function withQuery(path, params) {
  const q = new URLSearchParams();
  Object.entries(params).forEach(([k, v]) => { if (v !== '' && v !== null && v !== undefined) q.set(k, v); });
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** The file name a response's Content-Disposition gives (`filename*` first), if any. */
function attachmentName(res) {
  const header = res.headers.get('Content-Disposition') || '';
  const star = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (star) {
    try { return decodeURIComponent(star[1]); } catch (e) { /* the plain name below */ }
  }
  const plain = /filename="([^"]+)"/i.exec(header);
  return plain ? plain[1] : null;
}

/** Fetches a file with the Basic header and saves it through a Blob URL, under the name
 *  the server gives it (else `filename`); returns the name used. */
export async function download(path, filename) {
  const res = await send('GET', path, undefined, sessionStorage.getItem(KEY) || '');
  if (!res.ok) return decode(res);
  const name = attachmentName(res) || filename;
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  return name;
}
