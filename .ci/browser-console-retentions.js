// The console's retentions (CFDI de Retenciones) as an accountant uses them: seven
// shared samples issued by the demo taxpayer's RFC are imported through the CLI, then
// listed, filtered by retention key, opened (the withheld total exactly as the API wrote
// it), and downloaded as XML and PDF. axe-core runs on both pages.
'use strict';

const path = require('path');
const fs = require('fs');
const { execFileSync } = require('child_process');

const SAMPLES = path.resolve(__dirname, '../tests/fixtures/retenciones-samples');
const ISSUED = ['arrendamientoenfideicomiso', 'dividendos-nacional', 'enajenaciondeacciones', 'intereses',
  'operacionesconderivados', 'planesderetiro', 'sin-complemento'].map((n) => path.join(SAMPLES, `ret10-${n}-tfd10.xml`));

async function retentionSteps(page, { ok, fail, axe, shot }, rfc, { BASE, EMAIL, PASSWORD }) {
  const get = (url) => page.evaluate(async ([u, e, p]) => {
    const r = await fetch(u, { headers: { Authorization: `Basic ${btoa(`${e}:${p}`)}` }, credentials: 'omit' });
    return r.text();
  }, [url, EMAIL, PASSWORD]);
  const { CFDI_BIN: bin, CFDI_DATA_DIR: dataDir } = process.env;
  if (!bin || !dataDir) { fail('CFDI_BIN and CFDI_DATA_DIR are not set: no retentions to import'); return; }
  const entity = JSON.parse(await get(`${BASE}/v1/entities?limit=100`)).data.find((e) => e.tax_id === rfc);
  const out = execFileSync(bin, ['invoices', 'import', '--data-dir', dataDir, '--entity', entity.id, '--direction', 'issued', ...ISSUED],
    { encoding: 'utf8' });
  const imported = out.split('\n').filter((l) => l.startsWith('imported') && l.includes('retention')).length;
  if (imported !== ISSUED.length) fail(`importing the retention samples: ${out}`);
  else ok(`imported ${imported} CFDI de Retenciones issued by ${rfc}`);

  await page.getByRole('link', { name: 'Retenciones' }).click();
  await page.getByRole('heading', { level: 1, name: 'Retenciones' }).waitFor();
  const rows = page.locator('tr[data-retention]');
  await rows.nth(ISSUED.length - 1).waitFor().catch(() => {});
  const listed = await rows.count();
  if (listed !== ISSUED.length) fail(`the retentions list shows ${listed} rows, not ${ISSUED.length}`);
  else ok(`the retentions list shows ${listed} rows`);
  await axe('retentions');
  await shot('retentions');

  // Filtered to the interest certificate's key (16): one row.
  await page.getByLabel('Clave de retención').fill('16');
  await page.getByRole('button', { name: 'Filtrar' }).click();
  const one = await page.waitForFunction(() => {
    const r = document.querySelectorAll('tr[data-retention]');
    return r.length === 1 && /Intereses/.test(r[0].textContent);
  }, null, { timeout: 20000 }).then(() => true, () => false);
  if (!one) fail(`filtered to key 16: ${await rows.count()} rows`);
  else ok('filtered to retention key 16: the interest certificate alone');

  await rows.first().locator('a').click();
  await page.locator('#retention-withheld').waitFor();
  const id = page.url().split('/').pop();
  const written = /"withheld":(-?[0-9.]+)/.exec(await get(`${BASE}/v1/retentions/${id}`))[1];
  const shown = await page.locator('#retention-withheld').textContent();
  const [int, frac] = written.split('.');
  const expected = `$${int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${frac !== undefined ? `.${frac}` : ''}`;
  if (!shown.startsWith(expected)) fail(`the withheld total shows ${shown}, the API wrote ${written}`);
  else ok(`the withheld total shows ${shown} for the API's ${written}`);
  await axe('retention');
  await shot('retention');

  const [xml] = await Promise.all([page.waitForEvent('download'), page.locator('#download-retention-xml').click()]);
  const text = fs.readFileSync(await xml.path(), 'utf8');
  const original = fs.readFileSync(ISSUED[3], 'utf8');
  if (text !== original) fail(`the retention's XML download is not the imported file byte for byte (${text.length} bytes)`);
  else ok(`downloaded ${xml.suggestedFilename()}: the imported file byte for byte`);
  const [pdf] = await Promise.all([page.waitForEvent('download'), page.locator('#download-retention-pdf').click()]);
  const head = fs.readFileSync(await pdf.path()).subarray(0, 5).toString('latin1');
  if (head !== '%PDF-') fail(`the retention's PDF download starts with ${JSON.stringify(head)}`);
  else ok(`downloaded ${pdf.suggestedFilename()} (a PDF printed from the XML)`);
}

module.exports = { retentionSteps };
