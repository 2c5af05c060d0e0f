/**
 * The API keys page in real Chromium against a real `wsops serve` (issue 29): create a key
 * limited to an IP range, roll it with a grace and copy the successor, change its allowlist,
 * see last use with its address. axe-core on every page; screenshots with WSOPS_SCREENSHOTS=1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import {
  axeViolations,
  type ConsoleServer,
  launchBrowser,
  screenshot,
  startConsoleServer,
  type TestBrowser,
  until,
} from '../helpers/browser.js';
import { DIALECTS } from '../helpers/databases.js';

const PASSWORD = 'correct horse battery staple';

let browser: TestBrowser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

for (const dialect of DIALECTS) {
  describe(`console API keys in Chromium (issue 29) [${dialect}]`, () => {
    let server: ConsoleServer;
    let page: Page;
    const violations: string[] = [];
    const visit = async (name: string, scrollTo?: string) => {
      // A page's accessibility does not depend on the database: axe runs on the first dialect only.
      if (dialect === DIALECTS[0]) violations.push(...(await axeViolations(page, `${name} [${dialect}]`)));
      if (scrollTo) await page.locator(scrollTo).scrollIntoViewIfNeeded(); // the shot shows that part of the page
      if (dialect === 'sqlite') await screenshot(page, name);
    };
    const api = (key: string) => fetch(`${server.baseUrl}/api/v1/scopes`, { headers: { authorization: `Bearer ${key}` } });

    before(async () => {
      server = await startConsoleServer(dialect);
      const ws = (await server.cliJson(['workspace', 'create', '--name', 'Acme Facilities'])).id;
      const link = (await server.cliJson(['admin', 'create', '--workspace', ws, '--email', 'keys@acme.example'])).sign_in_url;
      const context = await browser.context(server.baseUrl);
      page = await context.newPage();
      const set = await page.request.post(link, { form: { password: PASSWORD, confirm: PASSWORD }, maxRedirects: 0 });
      assert.equal(set.status(), 303);
      await context.clearCookies();
      await page.goto('/console/sign-in');
      await page.getByLabel('Email').fill('keys@acme.example');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((u) => !u.pathname.startsWith('/console/sign-in'));
    });
    after(async () => {
      await page?.context().close();
      await server?.stop();
    });

    it('an admin creates a key limited to an IP range, rolls it with a 1 hour grace (both keys work), then narrows its successor to another range (403 ip_not_allowed)', async () => {
      await page.goto('/console/keys');
      await page.getByLabel('Name', { exact: true }).fill('Reporting');
      await page.getByRole('checkbox', { name: /^people:read / }).check();
      // A malformed range first: refused next to the field, what was typed kept.
      await page.getByLabel('Allowed IP ranges (optional)').fill('127.0.0.1/40');
      await page.getByRole('button', { name: 'Create key' }).click();
      assert.match(
        await page.locator('#f-allowed_ips-error').innerText(),
        /not a CIDR range: the prefix length after "\/" must be a whole number from 0 to 32/,
      );
      await page.getByRole('checkbox', { name: /^people:read / }).check();
      await page.getByLabel('Allowed IP ranges (optional)').fill('127.0.0.0/8, ::1');
      await page.getByRole('button', { name: 'Create key' }).click();
      const first = await page.getByLabel('API key', { exact: true }).inputValue();
      assert.match(first, /^svc_sk_test_[0-9A-Za-z]{16}_[0-9A-Za-z]{43}$/);
      const firstId = first.split('_')[3] as string;
      assert.equal((await api(first)).status, 200, 'served from 127.0.0.1, inside the range');

      // Last use, with the address, shows in the list.
      await until(
        async () => {
          await page.goto('/console/keys');
          return /from 127\.0\.0\.1/.test(await page.getByRole('row', { name: new RegExp(firstId) }).innerText());
        },
        10_000,
        'the last use with its address in the list',
        200,
      );
      await visit('keys-last-use', '#all-keys');

      // Roll with a grace of one hour.
      await page.getByRole('link', { name: `Roll key ${firstId}` }).click();
      await page.waitForURL(new RegExp(`/console/keys/${firstId}/roll$`));
      await page.getByRole('radio', { name: 'In 1 hour' }).check();
      await visit('key-roll');
      await page.getByRole('button', { name: `Roll key ${firstId}` }).click();
      const successor = await page.getByLabel('API key', { exact: true }).inputValue();
      assert.notEqual(successor, first);
      const successorId = successor.split('_')[3] as string;
      assert.match(await page.locator('main').innerText(), new RegExp(`Key ${firstId} rolled: its successor is ${successorId}`));
      assert.deepEqual([(await api(first)).status, (await api(successor)).status], [200, 200], 'both keys work during the grace');
      await page.goto('/console/keys');
      assert.match(await page.getByRole('row', { name: new RegExp(firstId) }).innerText(), /Rolled/);
      assert.match(
        await page.getByRole('row', { name: new RegExp(successorId) }).innerText(),
        /127\.0\.0\.0\/8/,
        'the successor keeps the allowlist',
      );
      await visit('keys-rolled', '#all-keys');

      // Narrow the successor's allowlist to a range this client is not in.
      await page.getByRole('link', { name: `IP allowlist of key ${successorId}` }).click();
      await page.getByLabel('Allowed IP ranges (optional)').fill('10.0.0.0/8');
      await visit('key-allowlist');
      await page.getByRole('button', { name: 'Save allowlist' }).click();
      await page.waitForURL(/\/console\/keys\?allowlist=/);
      assert.match(await page.locator('main').innerText(), new RegExp(`IP allowlist of key ${successorId} saved`));
      const refused = await api(successor);
      assert.equal(refused.status, 403);
      assert.equal(((await refused.json()) as { code: string }).code, 'ip_not_allowed');
      assert.deepEqual(violations, [], `axe-core: no serious or critical violation:\n${violations.join('\n')}`);
    });
  });
}
