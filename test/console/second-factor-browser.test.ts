/**
 * The second factor end to end in Chromium: an admin sets up an authenticator app on the
 * security page, saves the recovery codes, signs out, signs in with password and a code from
 * the app, then with a recovery code. The console runs in process on 127.0.0.1 so the test
 * computes the app's codes on the service's clock. axe-core on every page; screenshots with
 * WSOPS_SCREENSHOTS=1 (SQLite run).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { totpCode } from '../../src/sign-in/second-factor.js';
import { createAdminLink, signInUrl } from '../../src/sign-in/sign-in-links.js';
import { axeCheck, consoleAtLocalhost, launchBrowserForLocalhost, screenshot, type TestBrowser } from '../helpers/browser.js';
import { TEST_PASSWORD } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import type { Harness } from '../helpers/harness.js';

let browser: TestBrowser;
before(async () => {
  browser = await launchBrowserForLocalhost();
});
after(async () => {
  await browser?.close();
});

for (const dialect of DIALECTS) {
  describe(`console second factor in Chromium [${dialect}]`, () => {
    let h: Harness;
    let base: string;
    before(async () => {
      ({ h, base } = await consoleAtLocalhost(dialect));
    });
    after(() => h?.close());

    const check = async (page: Page, name: string) => {
      // A page's accessibility does not depend on the database: axe runs on the first dialect only.
      if (dialect === DIALECTS[0]) await axeCheck(page, `${name} [${dialect}]`);
      if (dialect === 'sqlite') await screenshot(page, name);
    };

    async function signInWithPassword(page: Page, email: string) {
      await page.goto('/console/sign-in');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/console\/sign-in\/second-factor/);
    }

    it('an admin sets up an authenticator app, then signs in with a code from it, and with a recovery code', async () => {
      const ws = await h.workspace({ seed: false });
      const email = `totp-${dialect}@example.com`;
      const link = await createAdminLink(h.services.database, { workspaceId: ws, email, actor: 'cli', now: h.clock() });
      const context = await browser.context(base);
      const page = await context.newPage();
      await page.goto(signInUrl(base, link.token));
      await page.getByLabel('New password').fill(TEST_PASSWORD);
      await page.getByLabel('Repeat the password').fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      await page.waitForURL(`${base}/console`);

      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign-in security' }).click();
      await check(page, 'security-empty');
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      const secret = await page.getByLabel('Setup key').inputValue();
      assert.match(secret, /^[A-Z2-7]{32}$/);
      await check(page, 'security-totp-setup');
      await page.getByLabel('Code from the app').fill(totpCode(secret, h.clock()));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      const codes = await page.getByRole('list', { name: 'Recovery codes' }).locator('code').allTextContents();
      assert.equal(codes.length, 10);
      await check(page, 'security-recovery-codes');
      h.clock.advance(30_000);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await signInWithPassword(page, email);
      await check(page, 'sign-in-code');
      await page.getByLabel(/Code from your authenticator app/).fill('000000' === totpCode(secret, h.clock()) ? '111111' : '000000');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByText('That code is not right').waitFor();
      await page.getByLabel(/Code from your authenticator app/).fill(totpCode(secret, h.clock()));
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(`${base}/console`);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await signInWithPassword(page, email);
      await page.getByLabel(/Code from your authenticator app/).fill(codes[0] as string);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL(`${base}/console`);
      await page.goto('/console/security');
      await page.getByText('9 unused codes left.').waitFor();
      await context.close();
    });
  });
}
