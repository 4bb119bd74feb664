// The 69-B list beyond one invoice: the demo taxpayer's received invoices extracted, a
// list loaded through the CLI naming the issuer of most of them as definitive and the
// taxpayer itself as disproved; the taxpayers page shows the taxpayer's own entry and,
// from the keyboard, its flagged counterparties with the API's counts and amounts; the
// received summary shows the warning section of definitive issuers. Ends on the summary.
'use strict';

const os = require('os');
const path = require('path');
const fs = require('fs');
const { execFileSync } = require('child_process');
const { listNaming } = require('./browser-console-sat');

/** JSON text -> value, every number kept as the text the API wrote (0.00 stays "0.00"). */
const exact = (raw) => JSON.parse(raw.replace(/([:,[]\s*)(-?\d+(?:\.\d+)?)(?=\s*[,}\]])/g, '$1"$2"'));
/** "1234.50" -> "1,234.50", as the console groups an amount. */
const grouped = (n) => n.replace(/^(-?)(\d+)/, (m, sign, int) => sign + int.replace(/\B(?=(\d{3})+(?!\d))/g, ','));

async function list69bSteps(page, { ok, fail, axe, shot }, rfc, { BASE, EMAIL, PASSWORD }) {
  const raw = (url) => page.evaluate(async ([u, e, p]) => {
    const r = await fetch(u, { headers: { Authorization: `Basic ${btoa(`${e}:${p}`)}` }, credentials: 'omit' });
    return r.text();
  }, [url, EMAIL, PASSWORD]);

  // The taxpayer's received invoices of the first days of September.
  await page.getByRole('link', { name: 'Contribuyentes' }).click();
  const row = page.locator('tr[data-entity]', { hasText: rfc });
  const entity = await row.getAttribute('data-entity');
  await row.getByRole('link', { name: `Nueva descarga ${rfc}` }).click();
  await page.getByRole('heading', { level: 1, name: 'Descargas' }).waitFor();
  await page.getByLabel('Desde').fill('2026-09-01');
  await page.getByLabel('Hasta').fill('2026-09-08');
  await page.getByLabel('Tipo de descarga').selectOption('received');
  await page.getByRole('button', { name: 'Iniciar' }).click();
  const extracted = await page.waitForFunction(() => {
    const first = document.querySelector('tr[data-extraction]');
    return first && /Recibidas/.test(first.textContent) && /01\/09\/2026 – 08\/09\/2026/.test(first.textContent)
      && /terminada/.test(first.querySelector('td.status').textContent);
  }, null, { timeout: 60000 }).then(() => true, () => false);
  if (!extracted) fail(`the received extraction did not finish: ${await page.locator('tr[data-extraction]').first().textContent()}`);
  else ok('the taxpayer\'s received invoices were extracted');

  // The issuer of most of them (not cancelled), listed as definitive; the taxpayer as disproved.
  const received = exact(await raw(`${BASE}/v1/invoices?entity_id=${entity}&direction=received&status=active&limit=100`)).data;
  const counts = new Map();
  received.filter((i) => i.issuer.tax_id !== rfc).forEach((i) => counts.set(i.issuer.tax_id, (counts.get(i.issuer.tax_id) || 0) + 1));
  const issuer = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0];
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'list69b-')), 'Listado_Completo_69-B.csv');
  // The issuer's row gets the definitive stage's publications (columns 13 to 16).
  const definitive = '500-05-2019-100 de fecha 1 de marzo de 2019';
  fs.writeFileSync(file, listNaming(issuer).replace('AAA191919HHH', rfc)
    .replace('23/10/2018,,,,,,,,', `23/10/2018,${definitive},01/03/2019,${definitive},15/03/2019,,,,`));
  execFileSync(process.env.CFDI_BIN, ['list-69b', 'load', '--data-dir', process.env.CFDI_DATA_DIR, file], { encoding: 'utf8' });

  // The taxpayers page: the taxpayer's own entry on its row (the list refreshes itself).
  await page.getByRole('link', { name: 'Contribuyentes' }).click();
  const own = await row.locator('td.list_69b', { hasText: '69-B: desvirtuado' }).waitFor({ timeout: 30000 }).then(() => true, () => false);
  if (!own) fail(`the taxpayer's row shows no 69-B entry: ${await row.textContent()}`);
  else ok('the taxpayer\'s row shows its own 69-B entry, "desvirtuado", without a reload');

  // Its flagged counterparties, opened from the keyboard.
  await row.getByRole('button', { name: `Lista 69-B ${rfc}` }).focus();
  await page.keyboard.press('Enter');
  const panel = page.locator('#entity-69b-panel');
  const flagged = panel.locator(`tr[data-counterparty="${issuer}"]`);
  const opened = await flagged.waitFor().then(() => true, () => false);
  const focus = await page.evaluate(() => document.activeElement && document.activeElement.id);
  const entry = await panel.locator('#entity-69b').textContent().catch(() => '');
  const api = exact(await raw(`${BASE}/v1/entities/${entity}/counterparties-69b`)).data;
  const mine = api.find((c) => c.tax_id === issuer);
  if (!opened || !mine) fail(`the flagged counterparties show no row for ${issuer}: ${await panel.textContent().catch(() => 'no panel')}`);
  else {
    const shown = await flagged.textContent();
    const count = await flagged.locator('.invoices').textContent();
    const amounts = mine.totals.flatMap((x) => [x.subtotal, x.total]).map(grouped);
    const missing = amounts.filter((a) => !shown.includes(`$${a}`));
    if (count !== mine.invoices || missing.length || !/69-B: definitivo/.test(shown) || !/definitivo: publicado por el SAT el 2019-03-01, en el DOF el 2019-03-15/.test(shown)) {
      fail(`${issuer} shows ${count} invoices (the API: ${mine.invoices}), lacks ${missing.join(', ')}: ${shown}`);
    } else ok(`${issuer} is flagged definitive with ${count} invoices and the API's ${amounts.length} amounts as written`);
    const rows = await panel.locator('tr[data-counterparty]').count();
    if (rows !== api.length) fail(`the panel lists ${rows} flagged counterparties, the API ${api.length}`);
  }
  if (focus !== 'l69b-h' || !entry.includes(rfc) || !/situación desvirtuado/.test(entry) || !/publicado por el SAT el/.test(entry)) {
    fail(`the 69-B panel: focus on ${focus}, own entry "${entry}"`);
  } else ok('the 69-B panel takes the focus and shows the taxpayer\'s own entry with its publications');
  // Filtered to presumed ones: none on this list, as the API says.
  await panel.getByLabel('Situación').selectOption('presumed');
  await panel.getByRole('button', { name: 'Filtrar' }).click();
  const none = await panel.getByText('Ninguna contraparte de sus facturas está en la lista 69-B.').waitFor().then(() => true, () => false);
  const presumed = exact(await raw(`${BASE}/v1/entities/${entity}/counterparties-69b?situation=presumed`)).data.length;
  if (!none || presumed) fail(`filtered to presumed: message ${none}, the API lists ${presumed}`);
  else ok('filtered to presumed counterparties: none, as the API says');
  await panel.getByLabel('Situación').selectOption('definitive');
  await panel.getByRole('button', { name: 'Filtrar' }).click();
  await flagged.waitFor();
  await axe('entities (69-B counterparties)');
  await shot('entities-69b');
  // Closing it returns the focus to the button that opened it.
  await panel.getByRole('button', { name: 'Cerrar' }).press('Enter');
  const back = await page.evaluate(() => document.activeElement && document.activeElement.getAttribute('aria-label'));
  if (back !== `Lista 69-B ${rfc}`) fail(`closing the 69-B panel left the focus on ${back}`);
  else ok('closing the 69-B panel returns the focus to its button');

  // The received summary of September warns of the definitive issuer, with its amounts.
  await page.getByRole('link', { name: 'Resumen fiscal' }).click();
  await page.getByRole('heading', { level: 1, name: 'Resumen fiscal' }).waitFor();
  await page.getByLabel('Contribuyente').selectOption(entity);
  await page.getByLabel('Dirección').selectOption('received');
  await page.getByLabel('Desde').fill('2026-09-01');
  await page.getByLabel('Hasta').fill('2026-09-30');
  await page.getByRole('button', { name: 'Calcular' }).click();
  const warning = page.locator('#summary-69b');
  const warned = await warning.locator(`tr[data-issuer="${issuer}"]`).first().waitFor().then(() => true, () => false);
  const lines = exact(await raw(`${BASE}/v1/entities/${entity}/summary?from=2026-09-01&to=2026-09-30&direction=received`)).definitive_69b_issuers;
  const shown = warned ? await warning.textContent() : '';
  const wanted = lines.flatMap((l) => [l.count, `$${grouped(l.subtotal)}`, `$${grouped(l.total)}`, `${l.definitive_sat} / ${l.definitive_dof}`]);
  const lacking = wanted.filter((w) => !shown.includes(w));
  if (!warned || !lines.length || lacking.length || !shown.includes('no amparan deducciones')) {
    fail(`the summary's 69-B warning: ${shown || 'missing'}; lacks ${lacking.join(', ')} of ${JSON.stringify(lines)}`);
  } else ok(`the received summary warns of ${issuer}, definitive: ${lines.length} line(s) with the API's counts and amounts`);
  await axe('summary (69-B warning)');
  await shot('summary-69b');
}

module.exports = { list69bSteps };
