// Steps of the console's browser check (.ci/browser-console.js) kept apart to keep that
// file short: removing an e.firma (cancelled in Spanish, confirmed in English, with the
// keyboard, which fails the waiting e.firma run), the waiting run in English,
// schedules, and the balance-due filter and a payment complement's detail.
'use strict';

const FIEL_RFC = 'EKU9003173C9';

/** Which control has the keyboard focus: its accessible label or its text. */
const focused = (page) => page.evaluate(() => {
  const el = document.activeElement;
  return el ? (el.getAttribute('aria-label') || el.textContent || '').trim() : '';
});

/** Opens the taxpayer's e.firma panel from its row (the current language's labels). */
async function openEfirma(page, heading) {
  await page.getByRole('link', { name: heading }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.locator('tr', { hasText: FIEL_RFC }).getByRole('button', { name: `e.firma ${FIEL_RFC}` }).click();
}

/** Spanish: "Quitar e.firma" asks first; Escape keeps the e.firma, focus returns. */
async function removeEfirmaCancelled(page, { ok, fail }) {
  await openEfirma(page, 'Contribuyentes');
  const remove = page.getByRole('button', { name: `Quitar e.firma ${FIEL_RFC}` });
  await remove.focus();
  await page.keyboard.press('Enter');
  const box = page.getByRole('alertdialog');
  const asked = await box.filter({ hasText: `¿Quitar la e.firma de ${FIEL_RFC}?` }).waitFor().then(() => true, () => false);
  const onCancel = await focused(page);
  await page.keyboard.press('Escape');
  await box.waitFor({ state: 'detached' });
  const back = await focused(page);
  const still = await page.locator('tr', { hasText: FIEL_RFC }).locator('td.efirma', { hasText: 'válida' }).count();
  if (!asked || onCancel !== 'Cancelar' || back !== `Quitar e.firma ${FIEL_RFC}` || !still) {
    fail(`removing the e.firma: asked ${asked}, focus on ${onCancel}, then ${back}, e.firma kept: ${still}`);
  } else ok('"Quitar e.firma" asks in Spanish, focus on Cancelar; Escape keeps it and returns the focus');
}

/** English: the waiting run in English, then the e.firma removed with the keyboard. */
async function englishEfirmaSteps(page, { ok, fail, axe, shot }) {
  await page.getByRole('link', { name: 'Extractions' }).click();
  await page.getByRole('heading', { level: 1, name: 'Extractions' }).waitFor();
  const run = page.locator('tr[data-extraction]', { hasText: FIEL_RFC });
  const waiting = await run.locator('td.status', { hasText: 'waiting at the SAT' })
    .filter({ hasText: 'the SAT is preparing it' }).filter({ hasText: 'Mexico City time' })
    .waitFor({ timeout: 30000 }).then(() => true, () => false);
  if (!waiting) fail(`the waiting e.firma run in English: ${await run.textContent().catch(() => '')}`);
  else ok(`in English: ${(await run.locator('td.status').textContent()).replace(/\s+/g, ' ')}`);
  await shot('extractions-waiting-en');

  await openEfirma(page, 'Taxpayers');
  await page.getByRole('button', { name: `Remove e.firma ${FIEL_RFC}` }).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('alertdialog').filter({ hasText: `Remove the e.firma of ${FIEL_RFC}?` }).waitFor();
  await axe('entities (remove e.firma)');
  await shot('entities-remove-efirma-en');
  // From Cancel, Shift+Tab reaches the confirming button.
  await page.keyboard.press('Shift+Tab');
  const on = await focused(page);
  await page.keyboard.press('Enter');
  const row = page.locator('tr', { hasText: FIEL_RFC });
  const gone = await row.locator('td.efirma', { hasText: 'No e.firma' }).waitFor().then(() => true, () => false);
  const said = await page.locator('#flash').textContent();
  if (on !== 'Remove e.firma' || !gone || !said.includes('e.firma removed.')) {
    fail(`removing the e.firma with the keyboard: focus on ${on}, row ${await row.textContent()}, flash ${said}`);
  } else ok('the e.firma removed with the keyboard after its confirmation; the row says "No e.firma"');

  // The run that was waiting fails at its next check (the first comes 10 s after its request).
  await page.getByRole('link', { name: 'Extractions' }).click();
  const failed = await run.locator('td.status', { hasText: 'failed' }).filter({ hasText: 'Reason: invalid credentials' })
    .waitFor({ timeout: 60000 }).then(() => true, () => false);
  if (!failed) fail(`the e.firma run after its e.firma was removed: ${await run.textContent().catch(() => '')}`);
  else ok('the waiting e.firma run failed with "invalid credentials" once its e.firma was removed');
}

/** Spanish: a daily schedule for the taxpayer; paused, resumed, deleted after asking. */
async function scheduleSteps(page, { ok, fail, axe, shot }, rfc) {
  await page.getByRole('link', { name: 'Descargas programadas' }).click();
  await page.getByRole('heading', { level: 1, name: 'Descargas programadas' }).waitFor();
  const label = await page.locator('select[name=entity_id] option', { hasText: rfc }).textContent();
  await page.getByLabel('Contribuyente').selectOption({ label });
  await page.getByLabel('Diaria a las (hora de la Ciudad de México)').fill('07:30');
  await page.getByRole('checkbox', { name: 'Recibidas' }).uncheck();
  await page.getByLabel('Días hacia atrás').fill('10');
  await page.getByRole('button', { name: 'Agregar', exact: true }).click();
  let row = page.locator('tr[data-schedule]', { hasText: rfc });
  const made = await row.filter({ hasText: 'Diaria a las 07:30' }).filter({ hasText: 'vigente' }).waitFor().then(() => true, () => false);
  const cells = made ? (await row.textContent()).replace(/\s+/g, ' ') : '';
  if (!made || !/\d{2}\/\d{2}\/\d{4}, 07:30:00/.test(cells) || /Recibidas/.test(cells)) fail(`the new schedule shows ${cells || await page.locator('#main').textContent()}`);
  else ok(`schedule created: ${cells}`);

  // The interval choice: a taxpayer may have several schedules (issue 40)...
  await page.getByLabel('Contribuyente').selectOption({ label });
  await page.getByRole('radio', { name: 'Cada cierto tiempo' }).check();
  await page.getByLabel('Intervalo (p. ej. 6h, 90m, 1d)').fill('6h');
  await page.getByRole('button', { name: 'Agregar', exact: true }).click();
  const second = await page.waitForFunction(() => document.querySelectorAll('tr[data-schedule]').length === 2)
    .then(() => true, () => false);
  if (!second) fail(`a second schedule for the taxpayer: ${await page.locator('.error').textContent().catch(() => 'no error')}`);
  else ok('a second schedule for the taxpayer, every 6h, is listed beside the daily one');

  // Editing only its directions keeps its next run: the console sends only what changed
  // (sending `every` again would start the interval anew).
  const everyRow = page.locator('tr[data-schedule]', { hasText: rfc }).filter({ hasText: 'Cada 6h' });
  const cell = (n) => everyRow.locator('td').nth(n).textContent();
  const [directions, nextRun] = [await cell(2), await cell(6)];
  await everyRow.getByRole('button', { name: /^Editar / }).click();
  await page.getByRole('checkbox', { name: 'Recibidas' }).click();
  await page.getByRole('button', { name: 'Guardar', exact: true }).click();
  const edited = await page.waitForFunction(([rfc, before]) => [...document.querySelectorAll('tr[data-schedule]')]
    .some((tr) => tr.textContent.includes(rfc) && tr.textContent.includes('Cada 6h') && tr.cells[2].textContent !== before),
  [rfc, directions]).then(() => true, () => false);
  const nextAfter = await cell(6);
  if (!edited || nextAfter !== nextRun) fail(`editing the interval schedule's directions (${directions}): edited ${edited}, next run ${nextRun} -> ${nextAfter}`);
  else ok(`the interval schedule's directions edited (${directions} -> ${await cell(2)}); its next run stays ${nextAfter}`);

  // ...but not two at the same times for the same direction: refused, clearly, in Spanish.
  await page.getByLabel('Contribuyente').selectOption({ label });
  await page.getByRole('radio', { name: /^Diaria/ }).check();
  await page.getByLabel('Diaria a las (hora de la Ciudad de México)').fill('07:30');
  await page.getByRole('checkbox', { name: 'Recibidas' }).uncheck();
  await page.getByRole('button', { name: 'Agregar', exact: true }).click();
  const refused = await page.locator('.error', { hasText: 'ya tiene una descarga programada a las mismas horas' })
    .waitFor().then(() => true, () => false);
  if (!refused) fail(`a colliding schedule for the same taxpayer: ${await page.locator('.error').textContent().catch(() => 'no error')}`);
  else ok('a schedule at the same times as another of the taxpayer is refused in Spanish: "ya tiene una descarga programada a las mismas horas…"');
  const interval = page.locator('tr[data-schedule]', { hasText: rfc }).filter({ hasNotText: 'Diaria a las 07:30' });
  await interval.getByRole('button', { name: /^Eliminar / }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Eliminar' }).click();
  await page.waitForFunction(() => document.querySelectorAll('tr[data-schedule]').length === 1).catch(() => {});
  row = row.filter({ hasText: 'Diaria a las 07:30' });

  await row.getByRole('button', { name: /^Pausar / }).click();
  const paused = await row.filter({ hasText: 'en pausa' }).filter({ hasText: 'Pausada por un usuario.' }).waitFor().then(() => true, () => false);
  await axe('schedules');
  await shot('schedules');
  await row.getByRole('button', { name: /^Reanudar / }).click();
  const resumed = await row.filter({ hasText: 'vigente' }).waitFor().then(() => true, () => false);
  if (!paused || !resumed) fail(`pausing and resuming the schedule: paused ${paused}, resumed ${resumed}`);
  else ok('schedule paused (with its reason) and resumed');

  await row.getByRole('button', { name: /^Eliminar / }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Eliminar' }).click();
  const deleted = await page.locator('tr[data-schedule]').first().waitFor({ state: 'detached' }).then(() => true, () => false);
  if (!deleted) fail('deleting the schedule left it listed'); else ok('schedule deleted after its confirmation');
}

/** Spanish: the balance-due filter, and a payment complement's related documents. */
async function complementSteps(page, { ok, fail }) {
  await page.getByRole('link', { name: 'Facturas', exact: true }).click();
  await page.getByRole('button', { name: 'Limpiar' }).click();
  await page.locator('select[name=type]').selectOption('I');
  await page.locator('select[name=outstanding]').selectOption('true');
  await page.getByRole('button', { name: 'Filtrar' }).click();
  await page.waitForFunction(() => [...document.querySelectorAll('tr[data-invoice] td.type')].every((td) => td.firstChild.textContent === 'I')
    && document.querySelector('tr[data-invoice]'));
  const dues = await page.$$eval('tr[data-invoice] td:nth-child(7)', (tds) => tds.map((td) => td.textContent));
  if (!dues.length || dues.some((d) => /^\$0(\.0+)? /.test(d))) fail(`"Con saldo pendiente" lists balances ${dues.join(', ')}`);
  else ok(`"Con saldo pendiente": ${dues.length} income invoice(s), each with a balance due`);

  await page.locator('select[name=outstanding]').selectOption('');
  await page.locator('select[name=type]').selectOption('P');
  await page.getByRole('button', { name: 'Filtrar' }).click();
  await page.waitForFunction(() => [...document.querySelectorAll('tr[data-invoice] td.type')].every((td) => td.firstChild.textContent === 'P')
    && document.querySelector('tr[data-invoice]'));
  await page.locator('tr[data-invoice] a').first().click();
  await page.getByRole('heading', { level: 2, name: 'Pagos que contiene este complemento' }).waitFor();
  const related = await page.locator('section.panel').first().locator('tbody tr').count();
  if (!related) fail('the payment complement shows no related document');
  else ok(`a payment complement shows its payment and ${related} related document(s)`);
  // The SAT gives complements no PDF: the API's 404 stands, and the console asks for
  // one printed from the XML (render=true).
  const [printed] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'PDF impreso del XML' }).click()]);
  const head = require('fs').readFileSync(await printed.path()).subarray(0, 5).toString('latin1');
  if (head !== '%PDF-') fail(`the printed PDF download starts with ${JSON.stringify(head)}`);
  else ok(`downloaded ${printed.suggestedFilename()} printed from the XML (render=true)`);
}

/**
 * The tax summary page: the taxpayer's month shows the figures of the API's JSON, written
 * as the API wrote them, and downloads as XLSX.
 */
async function summarySteps(page, { ok, fail, axe, shot }, rfc, { BASE, EMAIL, PASSWORD }) {
  await page.getByRole('link', { name: 'Resumen fiscal' }).click();
  await page.getByRole('heading', { level: 1, name: 'Resumen fiscal' }).waitFor();
  const option = await page.locator('select[name=entity_id] option', { hasText: rfc }).first();
  const entity = await option.getAttribute('value');
  await page.getByLabel('Contribuyente').selectOption(entity);
  await page.getByLabel('Dirección').selectOption('issued');
  await page.getByLabel('Desde').fill('2026-09-01');
  await page.getByLabel('Hasta').fill('2026-09-30');
  await page.getByRole('button', { name: 'Calcular' }).click();
  await page.getByRole('heading', { level: 2, name: 'Totales por tipo y moneda' }).waitFor();
  const raw = await page.evaluate(async ([u, e, p]) => {
    const r = await fetch(u, { headers: { Authorization: `Basic ${btoa(`${e}:${p}`)}` }, credentials: 'omit' });
    return r.text();
  }, [`${BASE}/v1/entities/${entity}/summary?from=2026-09-01&to=2026-09-30&direction=issued`, EMAIL, PASSWORD]);
  const shown = await page.locator('#summary').textContent();
  const group = (n) => n.replace(/^(-?)(\d+)/, (m, sign, int) => sign + int.replace(/\B(?=(\d{3})+(?!\d))/g, ','));
  const written = [...raw.matchAll(/"(?:total|amount|base)":(-?[0-9.]+)/g)].map((m) => group(m[1]));
  const missing = written.filter((n) => !shown.includes(n));
  if (!written.length || missing.length) fail(`the summary page lacks ${missing.join(', ') || 'any figure'} of ${raw.slice(0, 300)}`);
  else ok(`the summary page shows the JSON's ${written.length} totals, bases and amounts as written`);
  const [xlsx] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Descargar XLSX' }).click()]);
  const zip = require('fs').readFileSync(await xlsx.path()).subarray(0, 2).toString('latin1');
  if (xlsx.suggestedFilename() !== 'summary-2026-09-01-2026-09-30-issued.xlsx' || zip !== 'PK') fail(`the summary XLSX is ${xlsx.suggestedFilename()} starting ${JSON.stringify(zip)}`);
  else ok(`downloaded ${xlsx.suggestedFilename()}`);
  await axe('summary');
  await shot('summary');
}

/**
 * Names are text from users: a 255-character word wraps inside its cell (neither the
 * page nor the table scrolls sideways, the RFC beside it stays on one line) and a
 * U+202E shows as its code point instead of turning the name around. The taxpayer's
 * name is put back after.
 */
async function namesStayReadable(page, row, rfc, { ok, fail, shot }) {
  const rename = async (name) => {
    await row.getByRole('button', { name: `Editar ${rfc}` }).click();
    await page.getByLabel('Nombre', { exact: true }).nth(1).fill(name);
    await page.getByRole('button', { name: 'Guardar' }).click();
  };
  const before = (await row.locator('td.user').textContent()).trim();
  for (const [what, name, shown] of [
    ['a 255-character name', 'A'.repeat(255), 'A'.repeat(255)],
    ['a name with U+202E', 'Comercializadora \u202eSA de CV', 'Comercializadora <U+202E>SA de CV'],
  ]) {
    await rename(name);
    const seen = await row.locator('td.user', { hasText: shown }).waitFor().then(() => true, () => false);
    const layout = await row.evaluate((tr) => {
      const lines = (cell) => { const r = document.createRange(); r.selectNodeContents(cell); return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size; };
      const wrap = tr.closest('.table-wrap');
      const wide = document.documentElement.scrollWidth > window.innerWidth || wrap.scrollWidth > wrap.clientWidth;
      return { wide, rfcLines: lines(tr.cells[0]), text: tr.querySelector('td.user').textContent };
    });
    if (!seen || layout.wide || layout.rfcLines !== 1 || layout.text !== shown) {
      fail(`${what}: shown ${JSON.stringify(layout.text.slice(0, 80))}, page or table scrolls sideways ${layout.wide}, RFC on ${layout.rfcLines} line(s)`);
    } else ok(`${what}: wraps in its cell, the RFC on one line, read in stored order`);
    await shot(`entities-${what.includes('U+') ? 'bidi' : 'long'}-name`);
  }
  await rename(before);
  await row.locator('td.user', { hasText: before }).waitFor();
}

/**
 * The month close of the taxpayer's September 2026: the extractions that cover it, the
 * IVA determination's figures as the API wrote them (grouped as the page shows
 * amounts), its lines and what was left out, and the IVA XLSX.
 */
async function monthSteps(page, { ok, fail, axe, shot }, rfc, { BASE, EMAIL, PASSWORD }) {
  await page.getByRole('link', { name: 'Cierre del mes' }).click();
  await page.getByRole('heading', { level: 1, name: 'Cierre del mes' }).waitFor();
  const option = await page.locator('#month-form select[name=entity_id] option', { hasText: rfc }).first();
  const entity = await option.getAttribute('value');
  await page.getByLabel('Contribuyente').selectOption(entity);
  await page.getByLabel('Mes', { exact: true }).fill('2026-09');
  await page.getByRole('button', { name: 'Mostrar' }).click();
  await page.getByRole('heading', { level: 2, name: 'Determinación de IVA del mes' }).waitFor();
  await page.locator('#month-extractions').waitFor();
  const raw = await page.evaluate(async ([u, e, p]) => {
    const r = await fetch(u, { headers: { Authorization: `Basic ${btoa(`${e}:${p}`)}` }, credentials: 'omit' });
    return r.json();
  }, [`${BASE}/v1/entities/${entity}/iva?month=2026-09`, EMAIL, PASSWORD]);
  const group = (n) => String(n).replace(/^(-?)(\d+)/, (m, sign, int) => sign + int.replace(/\B(?=(\d{3})+(?!\d))/g, ','));
  const figures = await page.locator('#iva-figures').textContent();
  const keys = ['iva_collected', 'iva_withheld_by_clients', 'iva_creditable', 'balance', 'iva_withheld_from_others', 'total_to_pay'];
  const missing = keys.filter((k) => !figures.includes(group(raw.figures[k])));
  const result = { payable: 'A cargo', in_favor: 'A favor', zero: 'Sin saldo' }[raw.figures.result];
  if (missing.length || !figures.includes(result)) fail(`the month's IVA lacks ${missing.join(', ') || result} of ${JSON.stringify(raw.figures)}`);
  else ok(`the month close shows the IVA determination as the API gives it (${result}, total ${raw.figures.total_to_pay})`);
  const rows = await page.locator('#iva-issued tbody tr, #iva-received tbody tr').count();
  if (rows !== raw.issued.length + raw.received.length) fail(`the month close shows ${rows} IVA lines of ${raw.issued.length + raw.received.length}`);
  else ok(`the month close lists both sides' ${rows} cash-basis IVA lines`);
  const [xlsx] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Descargar IVA (XLSX)' }).click()]);
  const zip = require('fs').readFileSync(await xlsx.path()).subarray(0, 2).toString('latin1');
  if (xlsx.suggestedFilename() !== 'iva-2026-09.xlsx' || zip !== 'PK') fail(`the IVA XLSX is ${xlsx.suggestedFilename()} starting ${JSON.stringify(zip)}`);
  else ok(`downloaded ${xlsx.suggestedFilename()}`);
  await diotSteps(page, { ok, fail, axe }, entity, { BASE, EMAIL, PASSWORD });
  await axe('month close');
  await shot('month-close');
}

/**
 * The month close's DIOT: its records as the API gives them, a supplier's settings
 * edited in Spanish (its operation type to 03) and seen in the API, the form's 422 in
 * Spanish, the TXT downloaded, and the supplier back to its defaults.
 */
async function diotSteps(page, { ok, fail, axe }, entity, { BASE, EMAIL, PASSWORD }) {
  const get = (path) => page.evaluate(async ([u, e, p]) => {
    const r = await fetch(u, { headers: { Authorization: `Basic ${btoa(`${e}:${p}`)}` }, credentials: 'omit' });
    return r.status === 200 ? r.json() : { status: r.status };
  }, [`${BASE}${path}`, EMAIL, PASSWORD]);
  await page.getByRole('heading', { level: 2, name: 'DIOT del mes' }).waitFor();
  let raw = await get(`/v1/entities/${entity}/diot?month=2026-09`);
  if (!raw.records.length) {
    // The walk extracted the issued side only: extract the received side of the same
    // days, wait for it to finish, and show the month again.
    const run = await page.evaluate(async ([u, e, p, body]) => {
      const r = await fetch(u, { method: 'POST', body, headers: { Authorization: `Basic ${btoa(`${e}:${p}`)}`, 'Content-Type': 'application/json' }, credentials: 'omit' });
      return r.json();
    }, [`${BASE}/v1/extractions`, EMAIL, PASSWORD, JSON.stringify({ entity_id: entity,
      options: { period: { from: '2026-09-01', to: '2026-09-08' }, download_type: 'received' } })]);
    let state = run;
    for (let i = 0; i < 600 && !['finished', 'failed'].includes(state.status); i += 1) {
      await page.waitForTimeout(100);
      state = await get(`/v1/extractions/${run.id}`);
    }
    if (state.status !== 'finished') fail(`the received extraction ended ${JSON.stringify(state)}`);
    await page.getByRole('button', { name: 'Mostrar' }).click();
    raw = await get(`/v1/entities/${entity}/diot?month=2026-09`);
  }
  await page.locator('#month-diot').getByText(`Formato: ${raw.layout} campos`).waitFor();
  const rows = await page.locator('#month-diot tr[data-supplier]').count();
  if (rows !== raw.records.length) fail(`the DIOT shows ${rows} suppliers of ${raw.records.length}`);
  else ok(`the month close lists the DIOT's ${rows} suppliers`);
  if (raw.records.length) {
    const rfc = raw.records[0].tax_id;
    await page.locator(`#month-diot tr[data-supplier="${rfc}"] button[data-edit]`).click();
    await page.getByRole('heading', { level: 3, name: `Configuración del proveedor ${rfc}` }).waitFor();
    await page.getByLabel('País de residencia (clave ISO de 3 letras)').fill('USA');
    await page.getByRole('button', { name: 'Guardar' }).click();
    const refused = await page.locator('#diot-supplier [data-field=country]', { hasText: 'solo aplica a un proveedor extranjero' })
      .waitFor({ timeout: 10000 }).then(() => true, () => false);
    if (!refused) fail('a national supplier\'s country is not refused in Spanish');
    else ok('a national supplier\'s country is refused on its field, in Spanish');
    await axe('DIOT supplier settings');
    await page.getByLabel('País de residencia (clave ISO de 3 letras)').fill('');
    await page.getByLabel('Tipo de operación').selectOption('03');
    await page.getByRole('button', { name: 'Guardar' }).click();
    await page.locator('#flash', { hasText: 'Configuración del proveedor guardada.' }).waitFor();
    await page.locator(`#month-diot tr[data-supplier="${rfc}"]`, { hasText: '03 - Prestación de servicios profesionales' }).waitFor();
    const saved = await get(`/v1/entities/${entity}/suppliers/${encodeURIComponent(rfc)}`);
    if (saved.operation_type !== '03') fail(`the supplier's settings saved ${JSON.stringify(saved)}`);
    else ok(`the supplier ${rfc}'s operation type saved as 03 and its DIOT row shows it`);
    await page.locator(`#month-diot tr[data-supplier="${rfc}"] button[data-edit]`).click();
    await page.getByRole('button', { name: 'Volver a los valores por omisión' }).click();
    await page.locator(`#month-diot tr[data-supplier="${rfc}"]`, { hasText: '85 - Otros' }).waitFor();
    ok('the supplier is back to its defaults (85)');
  }
  const [txt] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Descargar DIOT (TXT)' }).click()]);
  const lines = require('fs').readFileSync(await txt.path(), 'utf8').split('\r\n').filter(Boolean);
  const width = raw.layout === '54' ? 54 : 25;
  const bad = lines.filter((l) => l.split('|').length !== width);
  if (txt.suggestedFilename() !== 'diot-2026-09.txt' || lines.length !== raw.records.length || bad.length) {
    fail(`the DIOT TXT is ${txt.suggestedFilename()} with ${lines.length} lines, ${bad.length} not of ${raw.layout} fields`);
  } else ok(`downloaded ${txt.suggestedFilename()}: ${lines.length} lines of ${raw.layout} fields`);
}

module.exports = { removeEfirmaCancelled, scheduleSteps, englishEfirmaSteps, complementSteps, namesStayReadable, summarySteps, monthSteps };
