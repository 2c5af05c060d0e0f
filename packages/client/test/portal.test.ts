/**
 * The developer portal's pages load in Chromium with no console error (a CSP violation or a
 * request to another origin would show as one), and show what the server declares.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { ERROR_CATALOGUE } from '../../../src/errors.js';
import { ALL_EVENTS } from '../../../src/webhooks/events/event-types.js';
import { startServer, type TestServer } from './helpers/server.js';

describe('developer portal in Chromium', () => {
  let s: TestServer;
  let browser: Browser;
  before(async () => {
    s = await startServer('sqlite');
    browser = await chromium.launch({
      executablePath: process.env.WSOPS_CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
    });
  });
  after(async () => {
    await browser?.close();
    await s.close();
  });

  async function load(path: string, ready: string) {
    const page = await browser.newPage();
    const problems: string[] = [];
    const foreign: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('request', (r) => {
      if (!r.url().startsWith(s.baseUrl) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) foreign.push(r.url());
    });
    const res = await page.goto(`${s.baseUrl}${path}`);
    assert.equal(res?.status(), 200);
    assert.match(res?.headers()['content-security-policy'] ?? '', /script-src 'self'/);
    await page.waitForSelector(ready, { timeout: 30_000 });
    // The renderer keeps polling nothing, but may hold a request open; give it a moment to settle.
    await page.waitForLoadState('networkidle', { timeout: 3000 }).catch(() => {});
    return { page, problems, foreign };
  }

  it('getting started links every part and lists each register with its client property', async () => {
    const { page, problems, foreign } = await load('/developers', 'main h1');
    const text = await page.textContent('main');
    for (const part of ['client.purchaseRequests', 'verifyWebhook', 'wsops-mirror', 'next_cursor']) assert.ok(text?.includes(part), part);
    assert.deepEqual(problems, []);
    assert.deepEqual(foreign, []);
    await page.close();
  });

  it('the event catalogue shows every event with its scope', async () => {
    const { page, problems } = await load('/developers/events', 'main h1');
    for (const [type, e] of Object.entries(ALL_EVENTS)) {
      const section = await page.textContent(`section[id="${type}"]`);
      assert.ok(section?.includes(e.scope ?? 'none'), type);
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('the error catalogue lists every code', async () => {
    const { page, problems } = await load('/developers/errors', 'main h1');
    for (const code of Object.keys(ERROR_CATALOGUE)) assert.equal(await page.locator(`section[id="${code}"]`).count(), 1, code);
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('the API reference is rendered from the served document by the bundled renderer, from this origin only', async () => {
    const { page, problems, foreign } = await load('/developers/reference', 'text=List assets');
    assert.ok((await page.content()).includes('purchase-requests'));
    assert.deepEqual(problems, []);
    assert.deepEqual(foreign, []);
    await page.close();
  });
});
