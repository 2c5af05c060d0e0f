/**
 * Passkeys end to end in Chromium, with its virtual authenticator (DevTools protocol
 * `WebAuthn.addVirtualAuthenticator`: CTAP2, internal transport, resident keys, user
 * verification): an admin sets up an authenticator app and a passkey on the security page,
 * signs out, signs in with password and passkey, then removes the passkey confirming with it.
 *
 * Browsers refuse an IP address as a passkey's site, so the console's base URL is
 * http://localhost:PORT; Chromium is told that localhost is 127.0.0.1 (nothing else is asked).
 * axe-core on every page; screenshots with WSOPS_SCREENSHOTS=1 (SQLite run).
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
  describe(`console passkeys in Chromium [${dialect}]`, () => {
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

    it('an admin adds a passkey on the security page, signs out, signs in with password and passkey, and removes it confirming with it', async () => {
      const ws = await h.workspace({ seed: false });
      const email = `passkey-${dialect}@example.com`;
      const link = await createAdminLink(h.services.database, { workspaceId: ws, email, actor: 'cli', now: h.clock() });
      const context = await browser.context(base);
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable', { enableUI: false });
      const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: {
          protocol: 'ctap2',
          transport: 'internal',
          hasResidentKey: true,
          hasUserVerification: true,
          isUserVerified: true,
          automaticPresenceSimulation: true,
        },
      });

      await page.goto(signInUrl(base, link.token));
      await page.getByLabel('New password').fill(TEST_PASSWORD);
      await page.getByLabel('Repeat the password').fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      await page.waitForURL(`${base}/console`);

      // The authenticator app first, so the page shows both factors.
      await page.goto('/console/security');
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      const secret = await page.getByLabel('Setup key').inputValue();
      await page.getByLabel('Code from the app').fill(totpCode(secret, h.clock()));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();

      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.getByText('Give the passkey a name first.').waitFor();
      await page.getByLabel('Name of the new passkey').fill('This laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await page.getByText('Passkey “This laptop” added').waitFor();
      const stored = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      assert.equal(stored.credentials.length, 1, 'the virtual authenticator holds the new passkey');
      assert.equal(stored.credentials[0]?.rpId, 'localhost');
      await page.getByRole('list', { name: 'Your passkeys' }).locator('strong', { hasText: 'This laptop' }).waitFor();
      await check(page, 'security');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.goto('/console/sign-in');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/console\/sign-in\/second-factor/);
      await check(page, 'sign-in-second-factor');
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      await page.waitForURL(`${base}/console`);
      const row = await h.services.database.db
        .selectFrom('admin_passkeys')
        .selectAll()
        .where('name', '=', 'This laptop')
        .executeTakeFirstOrThrow();
      assert.ok(row.last_used_at, 'the use is recorded');
      const after = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      assert.equal(row.counter, after.credentials[0]?.signCount, 'the stored counter is the authenticator’s');

      await page.goto('/console/security');
      await page.getByRole('link', { name: 'Remove This laptop' }).click();
      await page.getByRole('heading', { name: 'Remove “This laptop”?' }).waitFor();
      await check(page, 'passkey-remove');
      await page.getByRole('button', { name: 'Confirm with a passkey and remove' }).click();
      await page.getByText('Passkey “This laptop” removed.').waitFor();
      assert.equal(await page.getByRole('list', { name: 'Your passkeys' }).count(), 0);
      await context.close();
    });
  });
}
