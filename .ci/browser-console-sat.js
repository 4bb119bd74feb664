// The SAT's side of an invoice in the console: its status at the SAT (asked again on
// demand, then shown once the sandbox's simulated status service has answered), and its
// counterparty flagged after a 69-B list naming it is loaded through the CLI (a warning
// on the invoice, a badge and a filter on the list). Ends on the invoice's page.
'use strict';

const os = require('os');
const path = require('path');
const fs = require('fs');
const { execFileSync } = require('child_process');

const LIST = path.resolve(__dirname, '../tests/fixtures/sat-status-fixtures/69b-listado-completo-sample.satcfdi.csv');

/** The shared sample list (its accents restored) with `rfc` listed as definitive. */
function listNaming(rfc) {
  return fs.readFileSync(LIST, 'utf8')
    .replace(/Informaci\uFFFDn/g, 'Información').replace(/Situaci\uFFFDn/g, 'Situación').replace(/Art\uFFFDculo/g, 'Artículo')
    .replace('AAA292929HHH', rfc)
    .replace('Desvirtuado,500-05-2017-38736', 'Definitivo,500-05-2017-38736');
}

async function satSteps(page, { ok, fail, axe, shot }, { BASE, EMAIL, PASSWORD }) {
  const get = (url) => page.evaluate(async ([u, e, p]) => {
    const r = await fetch(u, { headers: { Authorization: `Basic ${btoa(`${e}:${p}`)}` }, credentials: 'omit' });
    return r.json();
  }, [url, EMAIL, PASSWORD]);
  const id = page.url().split('/').pop();
  const route = page.url();

  // The answer is drawn in place when it arrives: no reload. The message is said beside
  // the button, in view.
  const before = await get(`${BASE}/v1/invoices/${id}`);
  await page.locator('#sat-check').click();
  const said = page.locator('#sat-check-status');
  const queued = await said.filter({ hasText: 'Consulta enviada al SAT' }).waitFor().then(() => true, () => false);
  const inView = await said.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight;
  });
  if (!queued || !inView) fail(`"Consultar al SAT ahora": message shown ${queued}, in view ${inView}`);
  else ok('"Consultar al SAT ahora" says the check is sent, beside the button, in view');
  // The sandbox's status service answers at the server's pace (2 a second by default).
  const answered = await said.filter({ hasText: 'El SAT respondió' }).waitFor({ timeout: 90000 }).then(() => true, () => false);
  const shown = await page.locator('#sat-state').textContent().catch(() => '');
  const inv = await get(`${BASE}/v1/invoices/${id}`);
  const state = inv.sat_status && inv.sat_status.state;
  const words = { active: 'vigente', cancelled: 'cancelada', not_found: 'no encontrada (aún)', not_registered: 'no registrada en el SAT' };
  const newer = inv.sat_status && (!before.sat_status || inv.sat_status.checked_at !== before.sat_status.checked_at);
  if (!answered || !state || shown !== words[state] || !newer) {
    fail(`the SAT's answer without a reload: answered ${answered}, shows "${shown}", the API says ${JSON.stringify(inv.sat_status)}`);
  } else ok(`the SAT's answer shows without a reload: "${shown}" for the API's ${state} (${(await said.textContent()).trim()})`);
  await axe('invoice (SAT answer)');

  // What is left after credit notes, as the API wrote it.
  const left = String(inv.balance_after_credits);
  const leftShown = await page.locator('#invoice-left').textContent();
  const [int, frac] = left.split('.');
  const leftWritten = `$${int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${frac !== undefined ? `.${frac}` : ''}`;
  if (inv.balance_after_credits === null ? leftShown !== '—' : !leftShown.startsWith(leftWritten)) {
    fail(`what is left after credit notes shows ${leftShown}, the API says ${left}`);
  } else ok(`what is left after credit notes shows ${leftShown} for the API's ${left}`);

  // Its counterparty on a 69-B list loaded through the CLI.
  const rfc = inv.direction === 'issued' ? inv.receiver.tax_id : inv.issuer.tax_id;
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'list69b-')), 'Listado_Completo_69-B.csv');
  fs.writeFileSync(file, listNaming(rfc));
  execFileSync(process.env.CFDI_BIN, ['list-69b', 'load', '--data-dir', process.env.CFDI_DATA_DIR, file], { encoding: 'utf8' });
  await page.reload();
  const box = page.locator('#counterparty-69b');
  const warned = await box.filter({ hasText: rfc }).filter({ hasText: 'situación definitivo' }).filter({ hasText: 'publicado por el SAT el' }).waitFor().then(() => true, () => false);
  if (!warned) fail(`the invoice shows no 69-B warning for ${rfc}: ${await box.textContent().catch(() => 'none')}`);
  else ok(`the invoice warns that ${rfc} is on the 69-B list as definitive`);
  await axe('invoice (SAT status, 69-B)');
  await shot('invoice-sat');

  await page.getByRole('link', { name: 'Facturas', exact: true }).click();
  await page.getByRole('button', { name: 'Limpiar' }).click();
  await page.locator('select[name=counterparty_69b]').selectOption('definitive');
  await page.getByRole('button', { name: 'Filtrar' }).click();
  const flagged = await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('tr[data-invoice]')];
    return rows.length > 0 && rows.every((r) => /69-B: definitivo/.test(r.textContent)) ? rows.length : 0;
  }, null, { timeout: 20000 }).then((n) => n.jsonValue(), () => 0);
  const expected = (await get(`${BASE}/v1/invoices?counterparty_69b=definitive&limit=50`)).data.length;
  if (!flagged || flagged !== expected) fail(`filtered to definitive 69-B counterparties: ${flagged} rows, the API lists ${expected}`);
  else ok(`filtered to definitive 69-B counterparties: ${flagged} rows, each with its badge`);
  await page.getByRole('button', { name: 'Limpiar' }).click();
  await page.goto(route);
  await page.locator('#invoice-total').waitFor();
}

module.exports = { satSteps, listNaming };
