#!/usr/bin/env node
// Drives Debian's chromium (through playwright-core) against a running
// `cfdi-extract serve --dev`: the guides render with their navigation, the Swagger UI
// renders every operation from the vendored bundle, no request leaves this machine, and
// "Try it out" on GET /v1/entities with the demo user's Basic credentials answers 200;
// then the accountants' console (.ci/browser-console.js).
//
// Usage: node .ci/browser-check.js BASE_URL   (screenshots go to $SCREENSHOT_DIR)
'use strict';

const path = require('path');
const fs = require('fs');
const { chromium } = require('playwright-core');
const { checkConsole } = require('./browser-console');

const BASE = (process.argv[2] || '').replace(/\/+$/, '');
if (!/^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(BASE)) {
  console.error('usage: node .ci/browser-check.js http://127.0.0.1:PORT');
  process.exit(2);
}
const SHOTS = path.resolve(process.env.SCREENSHOT_DIR || 'target/screenshots');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const EMAIL = process.env.DEMO_EMAIL || 'demo@example.com';
const PASSWORD = process.env.DEMO_PASSWORD || 'demo-password';
const MIN_OPERATIONS = 15;
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

const failures = [];
let passed = 0;
function fail(msg) {
  failures.push(msg);
  console.error(`FAIL ${msg}`);
}
function ok(msg) {
  passed += 1;
  console.log(`ok   ${msg}`);
}

async function main() {
  fs.mkdirSync(SHOTS, { recursive: true });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: 60000,
  });
  try {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
      colorScheme: 'light',
    });
    const page = await context.newPage();
    page.setDefaultTimeout(20000);

    // Every request the page makes must stay on this machine.
    const external = new Set();
    page.on('request', (req) => {
      const url = req.url();
      if (url.startsWith('data:') || url.startsWith('blob:') || url.startsWith('about:')) return;
      let host;
      try {
        host = new URL(url).hostname;
      } catch (e) {
        host = url;
      }
      if (!LOCAL_HOSTS.has(host) && !LOCAL_HOSTS.has(`[${host}]`)) external.add(url);
    });
    const failedRequests = [];
    page.on('requestfailed', (req) => failedRequests.push(`${req.url()} (${req.failure() && req.failure().errorText})`));
    const pageErrors = [];
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    // The CSP of /docs (no inline code) must not break the guides or Swagger UI.
    const cspViolations = [];
    page.on('console', (msg) => { if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text()); });

    // --- The guides.
    const res = await page.goto(`${BASE}/docs`, { waitUntil: 'load' });
    if (!res || res.status() !== 200) fail(`/docs answered ${res && res.status()}`);
    const title = await page.title();
    if (!/cfdi-extract/i.test(title)) fail(`/docs title is ${JSON.stringify(title)}`);
    else ok(`/docs title: ${title}`);
    const nav = await page.$$eval('nav a[href]', (as) => as.map((a) => a.getAttribute('href')));
    const guides = [...new Set(nav.filter((h) => h.startsWith('/docs')))];
    if (guides.length < 10) fail(`/docs navigation has ${guides.length} links: ${guides}`);
    else ok(`/docs navigation: ${guides.length} links`);
    // The stylesheet applied: the side navigation is laid out, not an inline list.
    const navDisplay = await page.$eval('nav', (n) => getComputedStyle(n).display).catch(() => 'missing');
    const styled = await page.$eval('link[rel=stylesheet]', (l) => !!l.sheet && l.sheet.cssRules.length > 0).catch(() => false);
    if (!styled) fail('the guides stylesheet did not load');
    else ok(`stylesheet applied (nav display: ${navDisplay})`);
    await page.screenshot({ path: path.join(SHOTS, 'docs.png') });

    // Each guide of the navigation opens, with a title and a heading.
    for (const href of guides) {
      const r = await page.goto(`${BASE}${href}`, { waitUntil: 'load' });
      const status = r && r.status();
      const ct = (r && r.headers()['content-type']) || '';
      if (status !== 200) {
        fail(`${href} answered ${status}`);
        continue;
      }
      if (ct.startsWith('text/html')) {
        const h1 = await page.$eval('h1', (h) => h.textContent.trim()).catch(() => '');
        if (!h1 && !href.startsWith('/docs/api')) fail(`${href} has no <h1>`);
      }
    }
    ok(`${guides.length} navigation links open`);

    // --- The API reference.
    const api = await page.goto(`${BASE}/docs/api`, { waitUntil: 'load' });
    if (!api || api.status() !== 200) fail(`/docs/api answered ${api && api.status()}`);
    await page.waitForFunction(
      (min) => document.querySelectorAll('.opblock').length >= min,
      MIN_OPERATIONS,
      { timeout: 30000 },
    ).catch(() => {});
    const operations = await page.$$eval('.opblock', (els) => els.length);
    if (operations < MIN_OPERATIONS) fail(`Swagger UI rendered ${operations} operations, expected >= ${MIN_OPERATIONS}`);
    else ok(`Swagger UI rendered ${operations} operations`);
    const specErrors = await page.$$eval('.errors-wrapper, .loading-container .info', (els) => els.map((e) => e.textContent.trim()).filter(Boolean));
    if (specErrors.length) fail(`Swagger UI reports errors: ${specErrors.join(' | ').slice(0, 500)}`);
    await page.screenshot({ path: path.join(SHOTS, 'docs-api.png') });

    // Authorize with the demo user's Basic credentials.
    await page.click('.auth-wrapper button.authorize');
    await page.waitForSelector('.modal-ux');
    await page.fill('input[aria-label="auth-basic-username"], .modal-ux input[type=text]', EMAIL);
    await page.fill('input[aria-label="auth-basic-password"], .modal-ux input[type=password]', PASSWORD);
    await page.click('.modal-ux button.modal-btn.auth.authorize');
    await page.waitForSelector('.modal-ux button.modal-btn.auth:not(.authorize)');
    const authorized = await page.$$eval('.modal-ux .auth-container', (els) => els.map((e) => e.textContent).join(' '));
    if (!/Authorized/i.test(authorized)) fail('the Authorize dialog did not accept the credentials');
    else ok('authorized as the demo user');
    await page.click('.modal-ux button.close-modal');
    await page.waitForSelector('.modal-ux', { state: 'detached' });

    // GET /v1/entities: expand, Try it out, Execute.
    const op = page
      .locator('.opblock.opblock-get')
      .filter({ has: page.locator('.opblock-summary-path[data-path="/v1/entities"]') })
      .first();
    await op.locator('.opblock-summary-control').click();
    await op.locator('.opblock-body').waitFor();
    const tryOut = op.locator('button.try-out__btn');
    if ((await tryOut.count()) > 0) {
      const label = (await tryOut.first().textContent()).trim();
      if (/try it out/i.test(label)) await tryOut.first().click();
    }
    await op.locator('button.execute').click();
    const statusCell = op.locator('.live-responses-table .response .response-col_status').first();
    const answered = await statusCell.waitFor({ timeout: 20000 }).then(() => true, () => false);
    const shown = answered ? (await statusCell.textContent()).trim() : '';
    if (!answered) {
      // A 401 carries WWW-Authenticate: Basic, so the browser holds the request for its own
      // login prompt instead of handing the answer to the page: usually wrong credentials.
      fail('Execute on GET /v1/entities showed no response within 20 s (wrong credentials?)');
    } else if (!shown.startsWith('200')) {
      const body = await op.locator('.live-responses-table .response').first().textContent().catch(() => '');
      fail(`Execute on GET /v1/entities shows ${JSON.stringify(shown)}: ${body.slice(0, 300)}`);
    } else {
      ok('Try it out on GET /v1/entities answered 200');
    }
    const curl = await op.locator('.curl-command, .request-url').first().textContent().catch(() => '');
    if (curl && !curl.includes(BASE.replace(/^https?:\/\//, ''))) fail(`the request went to ${curl.slice(0, 200)}, not ${BASE}`);
    await op.locator('.live-responses-table').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SHOTS, 'docs-api-try.png') });

    if (external.size) fail(`requests left this machine: ${[...external].join(', ')}`);
    else ok('no request went to another host');
    if (failedRequests.length) fail(`failed requests: ${failedRequests.join(', ')}`);
    if (pageErrors.length) fail(`page errors: ${pageErrors.join(' | ')}`);
    if (cspViolations.length) fail(`CSP violations on /docs: ${cspViolations.join(' | ')}`);
    else ok('no CSP violation on the guides or the API reference');

    // --- The console.
    await checkConsole(context, BASE, {
      ok, fail, SHOTS, EMAIL, PASSWORD, OTHER_EMAIL: process.env.OTHER_EMAIL, OTHER_PASSWORD: process.env.OTHER_PASSWORD,
    });
  } finally {
    await browser.close();
  }
}

const watchdog = setTimeout(() => {
  console.error('FAIL the browser check took over 600 s');
  process.exit(1);
}, 600000);

main()
  .catch((err) => fail(`${err && err.stack ? err.stack : err}`))
  .finally(() => {
    clearTimeout(watchdog);
    console.log(`screenshots in ${SHOTS}`);
    console.log(`browser: ${passed} passed, ${failures.length} failed`);
    process.exit(failures.length ? 1 : 0);
  });
