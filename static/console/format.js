// Parsing and display rules.
//
// Amounts: the API writes them as JSON numbers with their exact decimal digits
// (`"paid_amount":0.00`). JSON.parse would turn them into binary floats (0.00 -> 0,
// 0.1 + 0.2 problems), so parseJson quotes every number token of the raw text before
// parsing: every number reaches the console as the string the server wrote, and money()
// only inserts thousands separators into that string. Nothing goes through a float.

/** JSON text -> value, with every number kept as its source text (a string). */
export function parseJson(text) {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      // Copy the string literal as is, honouring escapes.
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 64));
      out += `"${m[0]}"`;
      i += m[0].length;
    } else {
      out += c;
      i += 1;
    }
  }
  return JSON.parse(out);
}

/** An exact amount as written by the API, with separators and its currency: "$65,161.09 MXN". */
export function money(amount, currency) {
  if (amount === null || amount === undefined || amount === '') return '—';
  const s = String(amount);
  const neg = s.startsWith('-');
  const [int, frac] = (neg ? s.slice(1) : s).split('.');
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const cur = currency && currency !== 'XXX' ? ` ${currency}` : '';
  return `${neg ? '-' : ''}$${grouped}${frac !== undefined ? `.${frac}` : ''}${cur}`;
}

/** A service timestamp (UTC, RFC 3339) in Mexico City time, e.g. "22/11/2026, 21:44:40". */
export function timestamp(ts, locale) {
  if (!ts) return '—';
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return ts;
  return new Intl.DateTimeFormat(locale, {
    timeZone: 'America/Mexico_City', year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false,
  }).format(d);
}

/** A SAT date or timestamp (as the CFDI writes it, local time of the issuer) day first,
 *  as Mexico writes it: `30/09/2026 19:38:21`; anything else as written. */
export function satDate(s) {
  if (!s) return '—';
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}:\d{2}:\d{2}))?/.exec(String(s));
  if (!m) return String(s);
  return `${m[3]}/${m[2]}/${m[1]}${m[4] ? ` ${m[4]}` : ''}`;
}

/** `satDate`'s day and time apart, for a narrow table cell: [day, time or null]. */
export function satDay(s) {
  const [day, time] = satDate(s).split(' ');
  return [day, time || null];
}
