// The console (/console) as an accountant uses it, in chromium: a wrong password shows
// the message; sign in as the demo user; add a sandbox taxpayer and wait for its CIEC to
// validate, rename it; upload an e.firma from file pickers; extract a few days; an
// e.firma extraction waiting at the SAT (the sandbox's simulated web service: requests
// take three checks, the first after --sat-ws-poll, 10 s); schedule, pause and delete a
// schedule; page through the invoices, filter them to one RFC and export them; open one
// and download its XML and PDF; its status at the SAT and its counterparty on a 69-B list;
// the taxpayer's own 69-B entry, its flagged counterparties and the summary's warning;
// retentions imported, listed, filtered, opened and
// downloaded; what issue 39 asked (.ci/browser-console-accountant.js: errors in Spanish,
// search, counts and totals against the API, "Ambas", why runs wait, whole labels, the
// summary at 1366 px); the tax summary of a month and its XLSX; the month close (its
// extractions and IVA determination, the IVA XLSX); a complement's
// PDF printed from its XML; switch to English; the waiting run in English; remove the
// e.firma with the keyboard; a webhook's delivery log, then delete it; sign out; another
// organization's user sees none of it. axe-core runs on each page
// and fails on serious or critical violations. Screenshots: console-*.png.
'use strict';

const path = require('path');
const fs = require('fs');

const { removeEfirmaCancelled, scheduleSteps, englishEfirmaSteps, complementSteps, namesStayReadable, summarySteps, monthSteps, completionWithEfirmaSteps } = require('./browser-console-steps');
const { retentionSteps } = require('./browser-console-retentions');
const { satSteps } = require('./browser-console-sat');
const { list69bSteps } = require('./browser-console-69b');
const {
  entityErrorSteps, scheduleErrorSteps, invoiceSearchSteps, retentionSearchSteps, extractionSteps, summaryFitSteps,
} = require('./browser-console-accountant');

const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

async function checkConsole(context, BASE, { ok, fail, SHOTS, EMAIL, PASSWORD, OTHER_EMAIL, OTHER_PASSWORD }) {
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  const pageErrors = [];
  page.on('pageerror', (err) => pageErrors.push(String(err)));
  const cspViolations = [];
  page.on('console', (msg) => { if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text()); });
  const shot = (name) => page.screenshot({ path: path.join(SHOTS, `console-${name}.png`), fullPage: true });

  // axe-core is injected through the DevTools protocol (addScriptTag would be an inline
  // script, which the page's CSP rightly refuses).
  const axe = async (name) => {
    await page.evaluate(AXE);
    const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    if (bad.length) {
      fail(`axe on ${name}: ${bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join('; ')}`).join(' | ')}`);
    } else ok(`axe on ${name}: no serious or critical violations`);
  };

  const res = await page.goto(`${BASE}/console`, { waitUntil: 'load' });
  const csp = (res && res.headers()['content-security-policy']) || '';
  if (!/frame-ancestors 'none'/.test(csp) || /unsafe-inline/.test(csp)) fail(`/console CSP: ${csp}`);
  else ok('/console sends a CSP without inline scripts');
  await page.waitForSelector('input[name=email]');
  if ((await page.getAttribute('html', 'lang')) !== 'es-MX') fail('the console does not start in es-MX');
  await axe('sign-in');

  // A wrong password: the message, not the browser's login prompt.
  await page.getByLabel('Correo electrónico').fill(EMAIL);
  await page.getByLabel('Contraseña').fill('not-the-password');
  await page.getByRole('button', { name: 'Entrar' }).click();
  const wrong = await page.getByText('Correo o contraseña incorrectos.').waitFor().then(() => true, () => false);
  if (!wrong) fail('a wrong password shows no message'); else ok('a wrong password shows "Correo o contraseña incorrectos."');
  await shot('signin-wrong');

  // Sign in with the keyboard.
  await page.getByLabel('Contraseña').fill(PASSWORD);
  await page.getByLabel('Contraseña').press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Contribuyentes' }).waitFor();
  const stored = await page.evaluate(() => JSON.stringify(sessionStorage) + document.cookie + location.href);
  if (stored.includes(PASSWORD) || page.url().includes(PASSWORD)) fail('the password is stored in clear');
  ok('signed in');

  // A webhook to a closed local port, first, so the steps below make deliveries to log.
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
  await page.getByLabel('URL').fill('http://127.0.0.1:9/hook');
  await page.getByRole('button', { name: 'Agregar', exact: true }).click();
  const token = await page.locator('.notice code').textContent().catch(() => '');
  if (!token) fail('creating a webhook showed no signing token');
  else ok('webhook created; its signing token is shown');
  await page.getByRole('link', { name: 'Contribuyentes' }).click();
  await page.getByRole('heading', { level: 1, name: 'Contribuyentes' }).waitFor();

  // Add a sandbox taxpayer; its CIEC validates by itself and the table shows it live.
  const rfc = 'AAA010101AAA';
  await page.getByLabel('RFC', { exact: true }).fill(rfc);
  await page.getByLabel('Nombre', { exact: true }).fill('Comercializadora Demo');
  await page.getByLabel('Contraseña CIEC').fill('secreta1');
  await page.getByRole('button', { name: 'Agregar', exact: true }).click();
  const row = page.locator('tr', { hasText: rfc });
  await row.waitFor();
  // Keyboard focus on the row survives the live redraw when the status changes.
  await row.getByRole('button', { name: `Editar ${rfc}` }).focus();
  const valid = await row.locator('td.credential', { hasText: 'válida' }).waitFor({ timeout: 30000 }).then(() => true, () => false);
  if (!valid) fail(`the taxpayer's CIEC never showed valid: ${await row.textContent()}`);
  else ok('the taxpayer was added and its CIEC turned "válida" without a reload');
  const focused = await page.evaluate(() => document.activeElement && document.activeElement.getAttribute('aria-label'));
  if (focused !== `Editar ${rfc}`) fail(`the live redraw moved the keyboard focus to ${focused}`);
  else ok('the keyboard focus stayed on its control through the live update');
  // Rename it.
  await row.getByRole('button', { name: `Editar ${rfc}` }).click();
  await page.getByLabel('Nombre', { exact: true }).nth(1).fill('Comercializadora Demo SA');
  await page.getByRole('button', { name: 'Guardar' }).click();
  const renamed = await page.locator('tr', { hasText: 'Comercializadora Demo SA' }).waitFor().then(() => true, () => false);
  if (!renamed) fail('renaming the taxpayer did not show the new name'); else ok('taxpayer renamed');
  await namesStayReadable(page, row, rfc, { ok, fail, shot });

  // A second taxpayer with the test e.firma, uploaded from file pickers.
  const FIEL = path.join(__dirname, '..', 'tests', 'fixtures', 'efirma');
  await page.getByLabel('RFC', { exact: true }).fill('EKU9003173C9');
  await page.getByLabel('Nombre', { exact: true }).first().fill('Escuela Kemper Urgate');
  await page.getByLabel('Contraseña CIEC').fill('sandbox1');
  await page.getByRole('button', { name: 'Agregar', exact: true }).click();
  const fielRow = page.locator('tr', { hasText: 'EKU9003173C9' });
  await fielRow.getByRole('button', { name: 'e.firma EKU9003173C9' }).click();
  await page.getByLabel('Certificado (.cer)').setInputFiles(path.join(FIEL, 'EKU9003173C9.cer'));
  await page.getByLabel('Llave privada (.key)').setInputFiles(path.join(FIEL, 'EKU9003173C9.key'));
  await page.getByLabel('Contraseña de la llave').fill(fs.readFileSync(path.join(FIEL, 'EKU9003173C9-password.txt'), 'utf8').trim());
  await page.getByRole('button', { name: 'Subir' }).click();
  const uploaded = await page.getByText('30001000000500009999').waitFor().then(() => true, () => false);
  if (!uploaded) fail(`the e.firma summary did not show: ${await page.locator('.panel').textContent().catch(() => '')}`);
  else ok('e.firma uploaded from file pickers; its summary shows the serial');
  // Checked in the background: the row's e.firma status turns valid without a reload.
  const fielValid = await fielRow.locator('td:nth-child(4)', { hasText: 'válida' }).waitFor({ timeout: 30000 }).then(() => true, () => false);
  if (!fielValid) fail(`the e.firma never showed valid: ${await fielRow.textContent()}`);
  else ok('the e.firma status turned "válida" live');
  await axe('entities');
  await shot('entities');

  // Extract a few days from the taxpayer's row.
  await row.getByRole('link', { name: `Nueva descarga ${rfc}` }).click();
  await page.getByRole('heading', { level: 1, name: 'Descargas' }).waitFor();
  await page.getByLabel('Desde').fill('2026-09-01');
  await page.getByLabel('Hasta').fill('2026-09-08');
  await page.getByRole('button', { name: 'Iniciar' }).click();
  const done = await page.locator('td.status', { hasText: 'terminada' }).first().waitFor({ timeout: 60000 }).then(() => true, () => false);
  if (!done) fail(`the extraction did not finish: ${await page.locator('tbody').first().textContent()}`);
  else ok(`the extraction finished: ${(await page.locator('tr[data-extraction]').first().textContent()).replace(/\s+/g, ' ')}`);
  await axe('extractions');
  await shot('extractions');

  // An e.firma run: the sandbox's web service accepts the request and prepares it over
  // three checks, so the run waits at the SAT for over a minute, shown as such.
  const fielLabel = await page.locator('select[name=entity_id] option', { hasText: 'EKU9003173C9' }).textContent();
  await page.getByLabel('Contribuyente').selectOption({ label: fielLabel });
  await page.getByLabel('Desde').fill('2026-09-01');
  await page.getByLabel('Hasta').fill('2026-09-03');
  await page.getByRole('button', { name: 'Iniciar' }).click();
  const fielRun = page.locator('tr[data-extraction]', { hasText: 'EKU9003173C9' });
  const waitingEs = await fielRun.locator('td.status', { hasText: 'en espera en el SAT' })
    .filter({ hasText: 'el SAT la está preparando' }).filter({ hasText: 'siguiente consulta' })
    .waitFor({ timeout: 30000 }).then(() => true, () => false);
  if (!waitingEs) fail(`the e.firma run shows no waiting state: ${await fielRun.textContent().catch(() => '')}`);
  else ok(`an e.firma run waiting at the SAT: ${(await fielRun.locator('td.status').textContent()).replace(/\s+/g, ' ')}`);
  await axe('extractions (waiting)');
  await shot('extractions-waiting');

  await removeEfirmaCancelled(page, { ok, fail });
  await entityErrorSteps(page, { ok, fail, axe, shot }, rfc);
  await scheduleErrorSteps(page, { ok, fail, axe, shot }, rfc);
  await scheduleSteps(page, { ok, fail, axe, shot }, rfc);

  // Invoices filtered to one receiver RFC.
  await page.getByRole('link', { name: 'Facturas' }).click();
  await page.getByRole('heading', { level: 1, name: 'Facturas' }).waitFor();
  await page.locator('tr[data-invoice]').first().waitFor();
  // Cursor paging: the next page is another set of invoices, and back returns.
  const firstOf = () => page.locator('tr[data-invoice]').first().getAttribute('data-invoice');
  const page1 = await firstOf();
  await page.getByRole('button', { name: 'Página siguiente' }).click();
  await page.waitForFunction((id) => {
    const r = document.querySelector('tr[data-invoice]');
    return r && r.getAttribute('data-invoice') !== id;
  }, page1);
  await page.getByRole('button', { name: 'Página anterior' }).click();
  await page.waitForFunction((id) => {
    const r = document.querySelector('tr[data-invoice]');
    return r && r.getAttribute('data-invoice') === id;
  }, page1);
  ok('cursor paging: next page and back');
  // A receiver other than the taxpayer whose invoice has cents and is still unpaid (its
  // paid amount is written 0.00, which a float would print as 0).
  const receivers = await page.$$eval('tr[data-invoice]', (trs) => trs
    .filter((tr) => tr.children[5].textContent.includes('.'))
    .sort((a, b) => (b.children[5].textContent === b.children[6].textContent) - (a.children[5].textContent === a.children[6].textContent))
    .map((tr) => tr.children[4].firstChild.textContent));
  const target = receivers.find((r) => r !== rfc) || receivers[0];
  await page.getByLabel('RFC receptor').fill(target);
  await page.getByRole('button', { name: 'Filtrar' }).click();
  await page.waitForFunction((r) => {
    const cells = [...document.querySelectorAll('tr[data-invoice] td:nth-child(5)')].map((td) => td.firstChild.textContent);
    return cells.length > 0 && cells.every((c) => c === r);
  }, target);
  const count = await page.locator('tr[data-invoice]').count();
  ok(`filtered to receiver ${target}: ${count} invoice(s)`);
  // The spreadsheet export takes the applied filters, in the accountant's layout: the
  // same invoices, every one, then their totals after an empty line.
  await page.getByLabel('Formato').selectOption('csv');
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Descargar hoja de cálculo' }).click()]);
  const [table, totals = ''] = fs.readFileSync(await csv.path(), 'utf8').replace(/^\uFEFF/, '').split('\r\n\r\n');
  const lines = table.split(/\r\n/);
  if (csv.suggestedFilename() !== 'facturas.csv' || !lines[0].startsWith('Fecha de emisión,Serie,Folio,UUID (folio fiscal),')
    || lines.length - 1 !== count || !lines.slice(1).every((l) => l.includes(target)) || !totals.startsWith('Total ')) {
    fail(`the CSV export (${csv.suggestedFilename()}) has ${lines.length - 1} rows for ${count} listed: ${lines.slice(0, 3).join(' | ')} / ${totals.slice(0, 80)}`);
  } else ok(`exported ${csv.suggestedFilename()} for the accountant: the ${count} filtered invoice(s), Spanish headers, then ${totals.trim().split(/\r\n/).length} totals row(s)`);
  await page.getByLabel('Una fila por').selectOption('items');
  await page.getByLabel('Formato').selectOption('xlsx');
  const [xlsx] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Descargar hoja de cálculo' }).click()]);
  const zip = fs.readFileSync(await xlsx.path()).subarray(0, 2).toString('latin1');
  if (xlsx.suggestedFilename() !== 'conceptos.xlsx' || zip !== 'PK') fail(`the XLSX export is ${xlsx.suggestedFilename()} starting ${JSON.stringify(zip)}`);
  else ok('exported conceptos.xlsx (a ZIP, as XLSX is)');
  await axe('invoices');
  await shot('invoices');

  // Open one: its amounts are shown exactly as the API wrote them.
  await page.locator('tr[data-invoice] a').first().click();
  await page.locator('#invoice-total').waitFor();
  const id = page.url().split('/').pop();
  const raw = await page.evaluate(async ([u, e, p]) => {
    const r = await fetch(u, { headers: { Authorization: `Basic ${btoa(`${e}:${p}`)}` }, credentials: 'omit' });
    return r.text();
  }, [`${BASE}/v1/invoices/${id}`, EMAIL, PASSWORD]);
  // Each amount as the API wrote it (e.g. 0.00, which a float would print as 0).
  for (const [key, sel] of [['total', '#invoice-total'], ['paid_amount', '#invoice-paid']]) {
    const written = new RegExp(`"${key}":(-?[0-9.]+)`).exec(raw)[1];
    const shown = await page.locator(sel).textContent();
    const [int, frac] = written.split('.');
    const expected = `$${int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${frac !== undefined ? `.${frac}` : ''}`;
    if (!shown.startsWith(expected)) fail(`${key} shows ${shown}, the API wrote ${written}`);
    else ok(`${key} shows ${shown} for the API's ${written}`);
  }
  await axe('invoice');
  await shot('invoice');

  // Download its XML: a Blob URL of the authenticated response.
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Descargar XML' }).click()]);
  const file = await dl.path();
  const xml = fs.readFileSync(file, 'utf8');
  if (!/cfdi:Comprobante/.test(xml)) fail(`the XML download is not a CFDI: ${xml.slice(0, 200)}`);
  else ok(`downloaded ${dl.suggestedFilename()} (${xml.length} bytes, a CFDI)`);

  const [pdf] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Descargar PDF' }).click()]);
  const head = fs.readFileSync(await pdf.path()).subarray(0, 5).toString('latin1');
  if (head !== '%PDF-') fail(`the PDF download starts with ${JSON.stringify(head)}`);
  else ok(`downloaded ${pdf.suggestedFilename()} (a PDF)`);

  await satSteps(page, { ok, fail, axe, shot }, { BASE, EMAIL, PASSWORD });
  await invoiceSearchSteps(page, { ok, fail, axe, shot }, rfc, { EMAIL, PASSWORD });
  await retentionSteps(page, { ok, fail, axe, shot }, rfc, { BASE, EMAIL, PASSWORD });
  await retentionSearchSteps(page, { ok, fail, axe, shot }, { EMAIL, PASSWORD });
  await extractionSteps(page, { ok, fail, axe, shot }, rfc, { EMAIL, PASSWORD });
  await summarySteps(page, { ok, fail, axe, shot }, rfc, { BASE, EMAIL, PASSWORD });
  await summaryFitSteps(page, { ok, fail, axe, shot }, rfc);
  await monthSteps(page, { ok, fail, axe, shot }, rfc, { BASE, EMAIL, PASSWORD });
  await list69bSteps(page, { ok, fail, axe, shot }, rfc, { BASE, EMAIL, PASSWORD });
  await complementSteps(page, { ok, fail });

  // English.
  await page.getByRole('button', { name: 'English' }).click();
  const english = await page.getByRole('heading', { level: 1, name: /^Invoice/ }).waitFor().then(() => true, () => false);
  if (!english || (await page.getAttribute('html', 'lang')) !== 'en') fail('the English switch did not change the page');
  else ok('switched to English');
  await englishEfirmaSteps(page, { ok, fail, axe, shot });
  await completionWithEfirmaSteps(page, { ok, fail, axe, shot }, { BASE, EMAIL, PASSWORD });
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
  await page.getByRole('button', { name: 'Show deliveries' }).click();
  const logged = await page.locator('#dl-h ~ .table-wrap tbody tr').first().waitFor().then(() => true, () => false);
  if (!logged) fail('the webhook shows no deliveries'); else ok(`the webhook's delivery log shows ${await page.locator('#dl-h ~ .table-wrap tbody tr').count()} deliveries`);
  await axe('webhooks');
  await shot('webhooks-en');
  await page.getByRole('button', { name: 'Delete http://127.0.0.1:9/hook' }).click();
  await page.locator('.confirm').getByRole('button', { name: 'Delete' }).click();
  const gone = await page.getByText('No results.').first().waitFor().then(() => true, () => false);
  if (!gone) fail('deleting the webhook did not empty the list'); else ok('webhook deleted');

  // Tablet width: nothing wider than the viewport but the tables' own scroll boxes.
  await page.setViewportSize({ width: 768, height: 1024 });
  for (const [name, ready] of [['Taxpayers', 'tr[data-entity]'], ['Extractions', 'tr[data-extraction]'],
    ['Schedules', '#new-schedule'], ['Webhooks', '#add-webhook'], ['Invoices', 'tr[data-invoice]'], ['Tax summary', '#summary-form'], ['Month close', '#month-form']]) {
    await page.getByRole('link', { name }).click();
    await page.locator(ready).first().waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (overflow > 0) fail(`at 768 px ${name} is ${overflow} px wider than the screen`);
    else ok(`${name} usable at a tablet width (no horizontal page scroll)`);
    await shot(`${name.toLowerCase().replace(/ /g, '-')}-tablet`);
  }

  // Credentials the server no longer accepts (a changed password): the message, the
  // sign-in form, and signing in again returns to the page.
  await page.evaluate(() => sessionStorage.setItem('cfdi.basic', `Basic ${btoa('demo@example.com:changed-meanwhile')}`));
  await page.getByRole('link', { name: 'Taxpayers' }).click();
  const expired = await page.getByRole('alert').filter({ hasText: 'The session is no longer valid: sign in again.' }).waitFor().then(() => true, () => false);
  await page.getByLabel('Email').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const again = await page.getByRole('heading', { level: 1, name: 'Taxpayers' }).waitFor().then(() => true, () => false);
  if (!expired || !again) fail(`a refused session: message ${expired}, signed in again ${again}`);
  else ok('a session the server refuses shows "The session is no longer valid", and signing in again works');

  // Sign out: back to the form, credentials gone.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  const left = await page.evaluate(() => Object.keys(sessionStorage).length);
  if (left) fail('signing out left credentials in sessionStorage');
  else ok('signed out');
  await shot('signed-out');

  // Another organization's user sees none of it, even at the invoice's own address.
  if (OTHER_EMAIL) {
    await page.getByLabel('Email').fill(OTHER_EMAIL);
    await page.getByLabel('Password').fill(OTHER_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Taxpayers' }).waitFor();
    await page.locator('#main table').waitFor();
    const seen = await page.locator('tr[data-entity]').count();
    await page.goto(`${BASE}/console#/invoices/${id}`);
    const hidden = await page.getByText('Not found.').waitFor().then(() => true, () => false);
    await page.goto(`${BASE}/console#/invoices`);
    const none = await page.getByText('No results.').waitFor().then(() => true, () => false);
    await page.goto(`${BASE}/console#/schedules`);
    await page.getByRole('heading', { level: 1, name: 'Schedules' }).waitFor();
    const noSchedule = await page.getByText('No results.').waitFor().then(() => true, () => false);
    await page.goto(`${BASE}/console#/extractions`);
    await page.locator('#main table').waitFor();
    const runs = await page.locator('tr[data-extraction]').count();
    if (seen || !hidden || !none || !noSchedule || runs) {
      fail(`another organization's user sees ${seen} taxpayers, ${runs} extractions; invoice hidden: ${hidden}, invoice list empty: ${none}, schedules empty: ${noSchedule}`);
    } else ok("another organization's user sees no taxpayer, extraction, schedule or invoice, and a 404 for the demo's invoice");
    await shot('other-organization');
    await page.getByRole('button', { name: 'Sign out' }).click();
  } else fail('OTHER_EMAIL is not set: the second organization was not created');

  if (pageErrors.length) fail(`console page errors: ${pageErrors.join(' | ')}`);
  if (cspViolations.length) fail(`CSP violations: ${cspViolations.join(' | ')}`);
  await page.close();
}

module.exports = { checkConsole };
