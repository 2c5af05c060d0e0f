/**
 * Console pages in Chromium ask for no /favicon.ico (issue 27: every console page logged a 404
 * for it, Lighthouse best practices 96): the icon link names a data: URL the CSP allows, so the
 * browser requests nothing that is not there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ConsoleServer, launchBrowser, startConsoleServer, type TestBrowser } from '../helpers/browser.js';
import { DIALECTS } from '../helpers/databases.js';

let browser: TestBrowser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

// The sign-in page and its icon link are the same whichever database holds the data: the first
// dialect is enough.
for (const dialect of DIALECTS.slice(0, 1)) {
  describe(`console icon in Chromium [${dialect}]`, () => {
    let server: ConsoleServer;
    before(async () => {
      server = await startConsoleServer(dialect);
    });
    after(() => server?.stop());

    it('the sign-in page loads with no failed request, no /favicon.ico request and no console error', async () => {
      const context = await browser.context(server.baseUrl);
      try {
        const page = await context.newPage();
        const failed: string[] = [];
        const requested: string[] = [];
        const errors: string[] = [];
        page.on('request', (r) => requested.push(r.url()));
        page.on('response', (r) => {
          if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
        });
        page.on('console', (m) => {
          if (m.type() === 'error') errors.push(m.text());
        });
        await page.goto(`${server.baseUrl}/console/sign-in`, { waitUntil: 'networkidle' });
        // Chromium asks for the icon after the load; a short settle lets a request show up if it would.
        await page.waitForTimeout(500);
        assert.deepEqual(failed, []);
        assert.deepEqual(
          requested.filter((u) => u.includes('favicon')),
          [],
        );
        assert.deepEqual(errors, []);
        assert.equal(await page.locator('link[rel="icon"]').getAttribute('href'), 'data:,');
      } finally {
        await context.close();
      }
    });
  });
}
