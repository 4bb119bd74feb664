// What issue 39 asked of the console, in chromium: every error a user can provoke on
// the taxpayer and schedule forms in Spanish; the invoice and retention search, counts
// and totals agreeing with the API for every filter; codes with their descriptions; the
// extraction form's "Ambas" and its runs saying why they wait and why they processed
// fewer than they found; labels whole at laptop and tablet widths; the summary fitting
// 1366 px. Each step ends where it started (its page in Spanish).
'use strict';

const path = require('path');
const fs = require('fs');

const FIEL = path.join(__dirname, '..', 'tests', 'fixtures', 'efirma');
/** Words of the API's English messages: none may reach a Spanish page. */
const ENGLISH = /\b(must|can't|cannot|already|been|taken|characters|belongs|does|not|expired|give|either|interval|between|schedule)\b/i;

/** GET as the demo user from inside the page, the JSON read as the console reads it
 *  (every number kept as the text the API wrote: format.js's parseJson). */
function getter(page, { EMAIL, PASSWORD }) {
  return (url) => page.evaluate(async ([u, e, p]) => {
    const { parseJson } = await import('/console/format.js');
    const r = await fetch(u, { headers: { Authorization: `Basic ${btoa(`${e}:${p}`)}` }, credentials: 'omit', cache: 'no-store' });
    return parseJson(await r.text());
  }, [url, EMAIL, PASSWORD]);
}

/** The texts of an error box's lines, once it shows. */
async function errorLines(box) {
  await box.locator('li').first().waitFor();
  return (await box.locator('li').allTextContents()).map((s) => s.trim());
}

/** Compares what a form shows with what it should, every line Spanish. */
function judge({ ok, fail }, what, lines, expected) {
  const english = lines.filter((l) => ENGLISH.test(l));
  const missing = expected.filter((e) => !lines.includes(e));
  if (english.length || missing.length) fail(`${what}: shows ${JSON.stringify(lines)}; missing ${JSON.stringify(missing)}`);
  else ok(`${what}: ${lines.join(' | ')}`);
}

/** The taxpayer forms (add, edit, e.firma) with every error they can provoke. */
async function entityErrorSteps(page, t, rfc) {
  const { axe, shot } = t;
  await page.getByRole('link', { name: 'Contribuyentes' }).click();
  await page.getByRole('heading', { level: 1, name: 'Contribuyentes' }).waitFor();
  const addBox = page.locator('#add-entity').locator('xpath=preceding-sibling::div[1]');
  const add = async (taxId, name, ciec) => {
    await page.getByLabel('RFC', { exact: true }).fill(taxId);
    await page.getByLabel('Nombre', { exact: true }).first().fill(name);
    await page.getByLabel('Contraseña CIEC').fill(ciec);
    await page.getByRole('button', { name: 'Agregar', exact: true }).click();
    return errorLines(addBox);
  };
  judge(t, 'adding a taxpayer with a short RFC, a blank name and a short CIEC', await add('ABC12', '   ', 'corta'), [
    'RFC: debe tener 12 o 13 caracteres', 'Nombre: no puede quedar vacío', 'Contraseña CIEC: debe tener exactamente 8 caracteres']);
  await axe('entities (errors)');
  await shot('entities-errors');
  judge(t, 'adding one with a malformed RFC and a 256-character name', await add('1234567890123', 'A'.repeat(256), 'secreta1'), [
    'RFC: debe ser un RFC: 3 o 4 letras (A-Z, Ñ, &), 6 dígitos y 3 letras o dígitos', 'Nombre: debe tener como máximo 255 caracteres']);
  judge(t, 'adding one whose RFC is taken', await add(rfc, 'Otra', 'secreta1'), ['RFC: ya está registrado']);
  await page.locator('#add-entity').evaluate((f) => f.reset());

  // Editing: a blank name, a long one, a short new CIEC.
  const row = page.locator('tr', { hasText: rfc });
  await row.getByRole('button', { name: `Editar ${rfc}` }).click();
  const panel = page.locator('section.panel');
  await panel.getByLabel('Nombre', { exact: true }).fill('  ');
  await panel.getByLabel('Nueva CIEC (opcional)').fill('123');
  await panel.getByRole('button', { name: 'Guardar' }).click();
  judge(t, 'editing it with a blank name and a short CIEC', await errorLines(panel.locator('.error')), [
    'Nombre: no puede quedar vacío', 'Contraseña CIEC: debe tener exactamente 8 caracteres']);
  await panel.getByLabel('Nombre', { exact: true }).fill('B'.repeat(256));
  await panel.getByLabel('Nueva CIEC (opcional)').fill('');
  await panel.getByRole('button', { name: 'Guardar' }).click();
  await panel.locator('.error li', { hasText: '255' }).waitFor();
  judge(t, 'editing it with a 256-character name', await errorLines(panel.locator('.error')), ['Nombre: debe tener como máximo 255 caracteres']);
  await panel.getByRole('button', { name: 'Cancelar' }).click();

  // Its e.firma: another taxpayer's, with a wrong password, the files swapped, expired.
  await row.getByRole('button', { name: `e.firma ${rfc}` }).click();
  const password = fs.readFileSync(path.join(FIEL, 'EKU9003173C9-password.txt'), 'utf8').trim();
  const upload = async (cer, key, pass) => {
    await panel.locator('.error').evaluateAll((boxes) => boxes.forEach((b) => b.remove()));
    await page.getByLabel('Certificado (.cer)').setInputFiles(path.join(FIEL, cer));
    await page.getByLabel('Llave privada (.key)').setInputFiles(path.join(FIEL, key));
    await page.getByLabel('Contraseña de la llave').fill(pass);
    await page.getByRole('button', { name: 'Subir' }).click();
    return errorLines(panel.locator('.error'));
  };
  const other = `Certificado (.cer): es del RFC EKU9003173C9, no del RFC de este contribuyente (${rfc})`;
  judge(t, "uploading another taxpayer's e.firma", await upload('EKU9003173C9.cer', 'EKU9003173C9.key', password), [other]);
  judge(t, 'uploading it with a wrong password', await upload('EKU9003173C9.cer', 'EKU9003173C9.key', 'no-es-esta'), [
    other, 'Contraseña de la llave: no descifra la llave privada']);
  judge(t, 'uploading the files swapped', await upload('EKU9003173C9.key', 'EKU9003173C9.cer', password), [
    'Certificado (.cer): no es un certificado X.509 en formato DER (el archivo .cer de la e.firma)',
    'Llave privada (.key): no es una llave privada cifrada en formato DER (el archivo .key de la e.firma)']);
  const expired = await upload('EKU9003173C9-expired.cer', 'EKU9003173C9.key', password);
  judge(t, 'uploading an expired certificate', expired, []);
  if (!expired.some((l) => /venció el \d{4}-\d{2}-\d{2}/.test(l))) t.fail(`the expired certificate: ${expired.join(' | ')}`);
  await axe('entities (e.firma errors)');
  await shot('entities-efirma-errors');
  await panel.getByRole('button', { name: 'Cancelar' }).click();
}

/** The schedule form with every error the API can give it (the browser's own checks
 *  keep the days within 1 to 2190). */
async function scheduleErrorSteps(page, t, rfc) {
  await page.getByRole('link', { name: 'Descargas programadas' }).click();
  await page.getByRole('heading', { level: 1, name: 'Descargas programadas' }).waitFor();
  const form = page.locator('#new-schedule');
  const box = page.locator('section[aria-labelledby=sch-add] > div').first();
  const label = await page.locator('select[name=entity_id] option', { hasText: rfc }).textContent();
  await page.getByLabel('Contribuyente').selectOption({ label });
  const submit = async () => {
    await box.evaluate((b) => b.replaceChildren());
    await page.getByRole('button', { name: 'Agregar', exact: true }).click();
    return errorLines(box);
  };
  for (const d of ['Emitidas', 'Recibidas']) await form.getByRole('checkbox', { name: d }).uncheck();
  judge(t, 'a schedule with no direction', await submit(), ['Direcciones: elija al menos una dirección: emitidas o recibidas']);
  await form.getByRole('checkbox', { name: 'Emitidas' }).check();
  await form.getByLabel('Diaria a las (hora de la Ciudad de México)').fill('');
  judge(t, 'a daily schedule without its time', await submit(), ['Diaria a las: no puede quedar vacío']);
  await page.getByRole('radio', { name: 'Cada cierto tiempo' }).check();
  const every = form.getByLabel('Intervalo (p. ej. 6h, 90m, 1d)');
  for (const [value, expected] of [
    ['cada rato', 'Intervalo (p. ej. 6h, 90m, 1d): debe ser un intervalo como 6h, 90m o 1d'],
    ['30m', 'Intervalo (p. ej. 6h, 90m, 1d): debe ser de al menos 1h'],
    ['40d', 'Intervalo (p. ej. 6h, 90m, 1d): debe ser de 31 días como máximo'],
  ]) {
    await every.fill(value);
    judge(t, `a schedule every ${value}`, await submit(), [expected]);
  }
  await t.axe('schedules (errors)');
  await t.shot('schedules-errors');
  await every.fill('');
  await page.getByRole('radio', { name: 'Diaria', exact: true }).check();
  await form.getByLabel('Diaria a las (hora de la Ciudad de México)').fill('07:00');
  await form.getByRole('checkbox', { name: 'Recibidas' }).check();
}

/** `1,234.50` grouping of an amount the API wrote, as the console writes it. */
function money(amount, currency) {
  const s = String(amount);
  const neg = s.startsWith('-');
  const [int, frac] = (neg ? s.slice(1) : s).split('.');
  const cur = currency && currency !== 'XXX' ? ` ${currency}` : '';
  return `${neg ? '-' : ''}$${int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${frac !== undefined ? `.${frac}` : ''}${cur}`;
}

/**
 * A list page's search and filters against the API: for each filter (one at a time,
 * each form control once, after "Limpiar"), the count the page says and each currency's
 * totals equal GET <path>/totals, and the rows are the list's first page. The SAT's
 * status checks may change what a filter matches meanwhile: a disagreement is asked
 * again before it counts.
 */
async function agree(page, t, api, { id, path, totals, cases }) {
  const form = page.locator(`#${id}-filters`);
  for (const [what, set, query] of cases) {
    let last = '';
    for (let attempt = 0; attempt < 3; attempt += 1) {
      // Every control emptied (the form's own reset clears the inputs a moment later),
      // then this case's.
      await form.evaluate((f) => {
        f.querySelectorAll('input').forEach((i) => { i.value = ''; });
        f.querySelectorAll('select').forEach((sel) => { sel.selectedIndex = 0; });
      });
      await set(form);
      await page.getByRole('button', { name: 'Filtrar' }).click();
      const qs = new URLSearchParams(query).toString();
      const expected = (await api(`${path}/totals?${qs}`));
      const shown = await page.waitForFunction(([i, n]) => {
        const c = document.querySelector(`#${i}-count`);
        return c && c.getAttribute('data-count') === n ? c.textContent : null;
      }, [id, String(expected.count)], { timeout: 8000 }).then((h) => h.jsonValue(), () => null);
      if (shown === null) { last = `the page never said ${expected.count}`; continue; }
      const list = (await api(`${path}?${qs}&limit=50`));
      const ids = list.data.map((d) => d.id);
      const same = await page.waitForFunction(([a, want]) => {
        const rows = [...document.querySelectorAll(`tr[${a}]`)].map((tr) => tr.getAttribute(a));
        return rows.length === want.length && rows.every((r, n) => r === want[n]);
      }, [`data-${id}`, ids], { timeout: 8000 }).then(() => true, () => false);
      const lines = await page.$$eval(`#${id}-totals tr[data-currency]`, (trs) => trs.map((tr) => ({
        currency: tr.getAttribute('data-currency'),
        cells: Object.fromEntries([...tr.querySelectorAll('td[data-total]')].map((td) => [td.getAttribute('data-total'), td.textContent])),
      })));
      const wrong = expected.currencies.filter((c, n) => !lines[n] || lines[n].currency !== (c.currency || '')
        || totals.some((k) => lines[n].cells[k] !== money(c[k], c.currency)));
      if (!wrong.length && lines.length === expected.currencies.length && same) {
        last = '';
        t.ok(`${what}: "${shown.trim()}", ${lines.length} currency line(s) and the first page as the API's`);
        break;
      }
      last = `${what}: totals ${JSON.stringify(lines)} against ${JSON.stringify(expected)}; the first page as the API's ${same}`;
    }
    if (last) t.fail(last);
  }
  await page.getByRole('button', { name: 'Limpiar' }).click();
}

/** The invoices' search, filters, counts and totals; codes described. */
async function invoiceSearchSteps(page, t, rfc, creds) {
  const api = getter(page, creds);
  await page.getByRole('link', { name: 'Facturas', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Facturas' }).waitFor();
  await page.locator('#invoice-filters').waitFor();
  const all = (await api('/v1/invoices?limit=200')).data;
  const entity = (await api('/v1/entities?limit=100')).data.find((e) => e.tax_id === rfc);
  const withFolio = all.find((i) => i.folio && i.type === 'I');
  const named = all.find((i) => i.receiver.name && i.receiver.tax_id !== rfc);
  const word = named.receiver.name.split(/\s+/).find((w) => w.length >= 5) || named.receiver.name;
  const fill = (name, value) => (form) => form.locator(`[name=${name}]`).fill(value);
  const pick = (name, value) => (form) => form.locator(`[name=${name}]`).selectOption(value);
  await agree(page, t, api, {
    id: 'invoice',
    path: '/v1/invoices',
    totals: ['subtotal', 'taxes_transferred', 'taxes_withheld', 'total', 'due_amount'],
    cases: [
      ['no filter', () => {}, {}],
      [`search by folio ${withFolio.folio}`, fill('q', withFolio.folio), { q: withFolio.folio }],
      ['search by a UUID in lower case', fill('q', withFolio.uuid.toLowerCase()), { q: withFolio.uuid.toLowerCase() }],
      [`search by a word of a name, ${word.toLowerCase()}`, fill('q', word.toLowerCase()), { q: word.toLowerCase() }],
      [`search by an RFC, ${named.receiver.tax_id}`, fill('q', named.receiver.tax_id), { q: named.receiver.tax_id }],
      ['the taxpayer', pick('entity_id', entity.id), { entity_id: entity.id }],
      ['issued', pick('direction', 'issued'), { direction: 'issued' }],
      ['received', pick('direction', 'received'), { direction: 'received' }],
      ['from 2026-09-03', fill('issued_from', '2026-09-03'), { issued_from: '2026-09-03' }],
      ['to 2026-09-04', fill('issued_to', '2026-09-04'), { issued_to: '2026-09-04' }],
      ['type I', pick('type', 'I'), { type: 'I' }],
      ['cancelled', pick('status', 'cancelled'), { status: 'cancelled' }],
      ['PPD', pick('payment_method', 'PPD'), { payment_method: 'PPD' }],
      ['with a balance due', pick('outstanding', 'true'), { outstanding: 'true' }],
      ['active at the SAT', pick('sat_state', 'active'), { sat_state: 'active' }],
      ['a counterparty on the 69-B list', pick('counterparty_69b', 'listed'), { counterparty_69b: 'listed' }],
      [`issuer ${rfc}`, fill('issuer_tax_id', rfc.toLowerCase()), { issuer_tax_id: rfc.toLowerCase() }],
      [`receiver ${named.receiver.tax_id}`, fill('receiver_tax_id', named.receiver.tax_id), { receiver_tax_id: named.receiver.tax_id }],
      ['a search with the period and type', async (form) => {
        await form.locator('[name=q]').fill(rfc);
        await form.locator('[name=issued_from]').fill('2026-09-02');
        await form.locator('[name=type]').selectOption('I');
      }, { q: rfc, issued_from: '2026-09-02', type: 'I' }],
    ],
  });

  // Codes with their descriptions: the columns, the type filter, "Ambas".
  const types = await page.$$eval('select[name=type] option', (os) => os.map((o) => o.textContent));
  const direction = await page.$eval('select[name=direction] option', (o) => o.textContent);
  await page.locator('#invoice-filters [name=payment_method]').selectOption('PPD');
  await page.getByRole('button', { name: 'Filtrar' }).click();
  const ppd = await page.locator('tr[data-invoice] td.method', { hasText: 'Pago en parcialidades o diferido' }).first()
    .waitFor().then(() => true, () => false);
  const income = await page.locator('tr[data-invoice] td.type', { hasText: 'Ingreso' }).first().waitFor().then(() => true, () => false);
  const sat = await page.locator('tr[data-invoice] td.sat .badge, tr[data-invoice] td.sat .muted').count();
  const seals = await page.locator('tr[data-invoice] td.seal .badge').count();
  // Read once the filtered rows are drawn ("Limpiar" redraws the page before them).
  const headers = await page.$$eval('#main th', (ths) => ths.map((th) => th.textContent));
  if (!headers.includes('Método de pago') || !headers.includes('Estado en el SAT') || !headers.includes('Sello') || !ppd || !income || !sat || !seals
    || !types.includes('I - Ingreso') || !types.includes('P - Pago') || direction !== 'Ambas') {
    t.fail(`invoice columns ${JSON.stringify(headers)}, PPD described ${ppd}, type described ${income}, SAT cells ${sat}, seal badges ${seals}, types ${JSON.stringify(types)}, direction "${direction}"`);
  } else t.ok('the list shows the payment method, SAT status and seal as columns, each code with its description; the type filter reads "I - Ingreso"; Dirección: "Ambas"');
  await t.axe('invoices (search and totals)');
  await t.shot('invoices-totals');
  await page.getByRole('button', { name: 'Limpiar' }).click();

  // The detail: each code beside its description.
  await page.locator('tr[data-invoice] a').first().click();
  await page.locator('#invoice-total').waitFor();
  const dd = async (term) => page.locator('dl.props dt', { hasText: new RegExp(`^${term}$`) }).first().locator('xpath=following-sibling::dd[1]').textContent();
  const form = await dd('Forma de pago');
  const use = await dd('Uso CFDI');
  const kind = await dd('Tipo');
  if (!/^\S+ - \S/.test(use) || !/ - /.test(kind) || !(form === '—' || / - /.test(form))) t.fail(`the invoice's codes: Uso ${use}, Tipo ${kind}, Forma ${form}`);
  else t.ok(`the invoice reads its codes: Tipo ${kind}, Uso CFDI ${use}, Forma de pago ${form}`);
  // The seal: a badge in words, and each of its seven checks.
  const seal = await page.locator('#seal .badge').textContent().catch(() => '');
  const checks = await page.locator('tr[data-check]').count();
  if (!/^sello (válido|inválido|sin verificar|por verificar)$/.test(seal) || checks !== 7) t.fail(`the invoice's seal: "${seal}", ${checks} checks`);
  else t.ok(`the invoice shows its seal as "${seal}" with its ${checks} checks`);
  await page.getByRole('link', { name: 'Facturas', exact: true }).click();
}

/** The retentions' search and totals. */
async function retentionSearchSteps(page, t, creds) {
  const api = getter(page, creds);
  await page.getByRole('link', { name: 'Retenciones', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Retenciones' }).waitFor();
  await page.locator('#retention-filters').waitFor();
  const one = (await api('/v1/retentions?limit=1')).data[0];
  const fill = (value) => (form) => form.locator('[name=q]').fill(value);
  await agree(page, t, api, {
    id: 'retention',
    path: '/v1/retentions',
    totals: ['operation', 'taxed', 'exempt', 'withheld'],
    cases: [
      ['no filter', () => {}, {}],
      ['search by the receiver, xaxx010101000', fill('xaxx010101000'), { q: 'xaxx010101000' }],
      ['search by a UUID', fill(one.uuid), { q: one.uuid }],
      ['retention key 16', (form) => form.locator('[name=retention_key]').fill('16'), { retention_key: '16' }],
    ],
  });
  const key = await page.locator('tr[data-retention] td.key').first().textContent();
  if (!/\d+\S/.test(key) || !/[a-z]{4}/.test(key)) t.fail(`a retention key without its description: ${key}`);
  else t.ok(`the retention key reads with its description: ${key}`);
  await t.axe('retentions (search and totals)');
}

/** Words of labels, badges and muted notes split across lines (not names). */
function brokenWords(page) {
  return page.evaluate(() => {
    const out = [];
    const els = document.querySelectorAll('th, label, .badge, td .muted:not(.user), nav a, td.status, button');
    els.forEach((el) => {
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement.closest('.user')) continue;
        const re = /\S+/g;
        let m;
        while ((m = re.exec(node.textContent))) {
          const range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (tops.size > 1) out.push(m[0]);
        }
      }
    });
    return out;
  });
}

/** "Ambas" starts two runs; a pending run says why it waits; an ended one why it
 *  processed fewer than it found. Labels stay whole at 768 px. */
async function extractionSteps(page, t, rfc, creds) {
  const api = getter(page, creds);
  await page.getByRole('link', { name: 'Descargas', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Descargas' }).waitFor();
  await page.locator('#new-extraction').waitFor();
  const label = await page.locator('select[name=entity_id] option', { hasText: rfc }).first().textContent();
  await page.getByLabel('Contribuyente').selectOption({ label });
  await page.getByLabel('Desde').fill('2026-10-01');
  await page.getByLabel('Hasta').fill('2026-10-09');
  await page.getByLabel('Tipo de descarga').selectOption('both');
  await page.getByRole('button', { name: 'Iniciar' }).click();
  const created = await page.locator('#flash', { hasText: 'Creadas: una descarga de emitidas y otra de recibidas.' }).waitFor().then(() => true, () => false);
  const rows = page.locator('tr[data-extraction]', { hasText: '01/10/2026 – 09/10/2026' });
  await rows.nth(1).waitFor().catch(() => {});
  const two = await rows.count();
  const waits = await rows.filter({ hasText: 'Recibidas' }).locator('td.status', { hasText: 'Espera a que termine la descarga anterior de este contribuyente' })
    .waitFor({ timeout: 10000 }).then(() => true, () => false);
  if (!created || two !== 2 || !waits) t.fail(`"Ambas": created ${created}, ${two} rows, the second waits for the first ${waits}: ${await rows.allTextContents()}`);
  else t.ok('"Ambas" starts an issued and a received run; the second says it waits for the first');
  await t.axe('extractions (both directions)');
  await t.shot('extractions-both');
  await rows.filter({ hasText: 'Recibidas' }).locator('td.status', { hasText: 'terminada' }).waitFor({ timeout: 60000 });

  // A run that processed fewer than it found says why, with the API's figures.
  const runs = (await api('/v1/extractions?limit=20')).data
    .filter((x) => x.status === 'finished' && Number(x.invoices_found) > Number(x.invoices_processed));
  if (!runs.length) t.fail('no run processed fewer than it found: nothing to explain');
  for (const run of runs.slice(0, 2)) {
    const u = (await api(`/v1/extractions/${run.id}`)).unprocessed;
    const cell = page.locator(`tr[data-extraction="${run.id}"] td.status`);
    const said = await cell.locator('.why', { hasText: `${run.invoices_processed} de ${run.invoices_found} procesadas:` })
      .waitFor().then(() => cell.textContent(), () => '');
    const parts = [[u.stored_before, 'ya estaban guardadas de antes'], [u.awaiting_xml, 'listadas por el SAT sin su XML todavía'],
      [u.conflicting, 'rechazadas porque su UUID']].filter(([n]) => n > 0);
    if (!said || !parts.every(([n, words]) => said.includes(`${n} ${words}`))) t.fail(`run ${run.id} (${JSON.stringify(u)}) says: ${said}`);
    else t.ok(`a run that found ${run.invoices_found} and processed ${run.invoices_processed} says why: ${said.replace(/\s+/g, ' ').slice(0, 160)}`);
  }

  // Labels break between words only, here and on the lists, at a tablet's width too.
  for (const width of [768, 1366]) {
    await page.setViewportSize({ width, height: 1000 });
    for (const [link, ready] of [['Descargas', 'tr[data-extraction]'], ['Facturas', 'tr[data-invoice]'], ['Retenciones', 'tr[data-retention]'],
      ['Descargas programadas', '#new-schedule']]) {
      await page.getByRole('link', { name: link, exact: true }).click();
      await page.locator(ready).first().waitFor();
      await page.waitForTimeout(300);
      const broken = await brokenWords(page);
      if (broken.length) t.fail(`${link} at ${width} px breaks inside ${JSON.stringify(broken.slice(0, 8))}`);
      else t.ok(`${link} at ${width} px: no label broken inside a word`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** The summary at 1366 px: every table fits, and it speaks to an accountant. */
async function summaryFitSteps(page, t, rfc) {
  await page.setViewportSize({ width: 1366, height: 900 });
  await page.getByRole('link', { name: 'Resumen fiscal' }).click();
  await page.getByRole('heading', { level: 1, name: 'Resumen fiscal' }).waitFor();
  const option = await page.locator('select[name=entity_id] option', { hasText: rfc }).first().getAttribute('value');
  await page.getByLabel('Contribuyente').selectOption(option);
  await page.getByLabel('Dirección').selectOption('issued');
  await page.getByLabel('Desde').fill('2026-09-01');
  await page.getByLabel('Hasta').fill('2026-09-30');
  await page.getByRole('button', { name: 'Calcular' }).click();
  await page.getByRole('heading', { level: 2, name: 'Totales por tipo y moneda' }).waitFor();
  const hidden = await page.$$eval('#summary .table-wrap', (ws) => ws.filter((w) => w.scrollWidth > w.clientWidth + 1)
    .map((w) => w.previousElementSibling && w.previousElementSibling.textContent));
  const text = await page.locator('#main').textContent();
  const api = /\bAPI\b|\/docs\//.test(text);
  const described = await page.locator('#summary td', { hasText: 'I - Ingreso' }).count();
  if (hidden.length || api || !described) t.fail(`the summary at 1366 px: tables scrolling sideways ${JSON.stringify(hidden)}, mentions the API ${api}, types described ${described}`);
  else t.ok('the summary fits 1366 px with every peso column in view, names types by their description and mentions no API');
  await t.shot('summary-1366');
  await page.setViewportSize({ width: 1280, height: 900 });
}

module.exports = { entityErrorSteps, scheduleErrorSteps, invoiceSearchSteps, retentionSearchSteps, extractionSteps, summaryFitSteps };
