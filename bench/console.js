#!/usr/bin/env node
// The console's first page of invoices on a running server: signs in through the form
// (as a person would), then RUNS times loads /console#/invoices in a fresh navigation and
// measures, in the page, the time from the navigation's start to the animation frame in
// which the first page's rows are in the document. The first load is cold (the console's
// modules are fetched), the others warm. Uses the browser check's install (Debian's
// chromium through .ci/node_modules/playwright-core, from `bash .ci/browser.sh` or
// `npm ci --prefix .ci`).
//
// Usage: node bench/console.js BASE_URL EMAIL PASSWORD [RUNS]
// Prints one line: console_first_page_ms cold=... median=... max=... runs=... rows=...
// Exits 3 when playwright-core or chromium is missing (bench.py then skips the figure).
'use strict';

const path = require('path');
const fs = require('fs');

const [BASE_ARG, EMAIL, PASSWORD, RUNS_ARG] = process.argv.slice(2);
const BASE = (BASE_ARG || '').replace(/\/+$/, '');
const RUNS = Number(RUNS_ARG || 5);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
if (!/^https?:\/\/[^/]+$/.test(BASE) || !EMAIL || !PASSWORD || !(RUNS >= 1)) {
  console.error('usage: node bench/console.js http://127.0.0.1:PORT EMAIL PASSWORD [RUNS]');
  process.exit(2);
}

let chromium;
try {
  ({ chromium } = require(path.join(__dirname, '..', '.ci', 'node_modules', 'playwright-core')));
} catch (e) {
  console.error('bench/console.js: playwright-core is not installed (npm ci --prefix .ci)');
  process.exit(3);
}
if (!fs.existsSync(CHROMIUM)) {
  console.error(`bench/console.js: no chromium at ${CHROMIUM}`);
  process.exit(3);
}

// Injected into every document before its own scripts (through the DevTools protocol,
// so the console's CSP does not apply): notes when the first page's rows are inserted,
// then the next animation frame, the one that draws them.
function watchFirstPage() {
  const seen = () => document.querySelector('tr[data-invoice]') || document.querySelector('#main .error, #main [aria-live] > p:not(.muted)');
  new MutationObserver((_, observer) => {
    if (!seen()) return;
    observer.disconnect();
    const rows = document.querySelectorAll('tr[data-invoice]').length;
    requestAnimationFrame(() => { window.firstPageDrawn = { ms: performance.now(), rows }; });
  }).observe(document, { childList: true, subtree: true });
}

/** Milliseconds from the navigation's start to the frame that shows the first page. */
async function firstPage(page) {
  await page.goto('about:blank');
  await page.goto(`${BASE}/console#/invoices`, { waitUntil: 'commit' });
  const handle = await page.waitForFunction(() => window.firstPageDrawn, null, { timeout: 60000 });
  const { ms, rows } = await handle.jsonValue();
  if (!rows) throw new Error(`the invoices page shows no invoices: ${await page.locator('#main').textContent()}`);
  return { ms, rows };
}

async function main() {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(60000);
    await page.addInitScript(watchFirstPage);
    // Sign in through the form: the credentials stay in the tab's sessionStorage.
    await page.goto(`${BASE}/console`);
    await page.fill('input[name=email]', EMAIL);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('form button[type=submit]');
    await page.waitForSelector('nav a[href="#/invoices"], #signin-error .error');
    if (await page.$('#signin-error .error')) throw new Error(`sign-in refused: ${await page.textContent('#signin-error')}`);
    const times = [];
    let rows = 0;
    for (let i = 0; i < RUNS; i += 1) {
      const r = await firstPage(page);
      times.push(r.ms);
      rows = r.rows;
    }
    const warm = times.slice(1).sort((a, b) => a - b);
    const median = warm.length ? warm[Math.floor(warm.length / 2)] : times[0];
    const max = Math.max(...times);
    console.log(`console_first_page_ms cold=${times[0].toFixed(0)} median=${median.toFixed(0)} max=${max.toFixed(0)} runs=${RUNS} rows=${rows}`);
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(`bench/console.js: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
