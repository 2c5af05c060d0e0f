/**
 * Single sign-on by OpenID Connect, end to end in Chromium: the console (in process, listening
 * on 127.0.0.1, so the test moves its clock) against a real `oidc-provider` on 127.0.0.1,
 * configured with the real CLI (`wsops sso set`). Every refusal the issue lists is tried:
 * wrong state, wrong nonce, an ID token from another issuer or expired, an address outside the
 * domain; and admins created just in time, password sign-in switched off, removal.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { removeAdmin } from '../../src/sign-in/admins.js';
import { createAdminLink, signInUrl } from '../../src/sign-in/sign-in-links.js';
import { setSso } from '../../src/sign-in/sign-in-rules.js';
import { axeCheck, consoleAtLocalhost, launchBrowserForLocalhost, screenshot, type TestBrowser } from '../helpers/browser.js';
import { encodeForm, TEST_PASSWORD } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { type Harness, TEST_SECRET } from '../helpers/harness.js';
import { startIssuerImpostor, startOidcProvider, type TestProvider } from '../helpers/oidc-provider.js';

const run = promisify(execFile);

/** The email_verified claim the claims provider sends for an address starting `<name>.`. */
const VERIFIED_CLAIMS = { yes: true, no: false, text: 'false', missing: undefined } as const;
const ROOT = new URL('../../', import.meta.url).pathname;

let browser: TestBrowser;
before(async () => {
  browser = await launchBrowserForLocalhost();
});
after(async () => {
  await browser?.close();
});

for (const dialect of DIALECTS) {
  describe(`console single sign-on in Chromium [${dialect}]`, () => {
    let h: Harness;
    let base: string;
    let provider: TestProvider;
    let shortLived: TestProvider;
    let impostor: { issuer: string; close(): Promise<void> };
    /** Says of each address what its local part names: true, false, "false" (a string) or nothing. */
    let claimsProvider: TestProvider;
    let ws: string;
    const contexts: BrowserContext[] = [];

    before(async () => {
      ({ h, base } = await consoleAtLocalhost(dialect));
      // ID tokens carry the real time; the service's clock starts there and the tests move it.
      h.clock.set(Date.now());
      provider = await startOidcProvider({ redirectUri: `${base}/console/sso/callback` });
      shortLived = await startOidcProvider({ redirectUri: `${base}/console/sso/callback`, idTokenTtlSeconds: 60 });
      impostor = await startIssuerImpostor(provider);
      claimsProvider = await startOidcProvider({
        redirectUri: `${base}/console/sso/callback`,
        emailVerified: (login) => VERIFIED_CLAIMS[login.slice(0, login.indexOf('.')) as keyof typeof VERIFIED_CLAIMS],
      });
      ws = await h.workspace({ seed: false });
    });
    after(async () => {
      for (const c of contexts) await c.close();
      await Promise.all([provider?.close(), shortLived?.close(), impostor?.close(), claimsProvider?.close()]);
      await h?.close();
    });

    async function context(): Promise<BrowserContext> {
      const c = await browser.context(base);
      // Nothing leaves this machine (the provider's sign-in page asks for a web font).
      await c.route(
        (url) => url.hostname !== '127.0.0.1' && url.hostname !== 'localhost',
        (route) => route.abort(),
      );
      contexts.push(c);
      return c;
    }

    /** The CLI's stdout; `input` is written to its standard input (then closed). */
    const cli = async (args: string[], input?: string) => {
      const child = run(process.execPath, [join(ROOT, 'bin/wsops'), ...args], {
        cwd: ROOT,
        env: { ...process.env, WSOPS_DATABASE_URL: h.databaseUrl, WSOPS_SECRET: TEST_SECRET, WSOPS_BASE_URL: base },
      });
      child.child.stdin?.end(input ?? '');
      return (await child).stdout;
    };

    async function workspaceWith(issuer: string, p: TestProvider, createAdmins = false): Promise<string> {
      const w = await h.workspace({ seed: false });
      await setSso(h.services.database.db, {
        workspaceId: w,
        issuer,
        clientId: p.clientId,
        clientSecret: p.clientSecret,
        domain: 'example.com',
        createAdmins,
        actor: 'cli',
        now: h.clock(),
        box: h.services.secretBox,
      });
      return w;
    }

    /**
     * Starts SSO for a workspace and signs in at the provider's form as `email`. The requests
     * a test tampers with arrive by redirect, which the browser follows without asking the
     * test's routes; so `authorize` rewrites the provider URL wsops redirects to, and
     * `callback` rewrites the URL the provider sends the browser back with (the redirects in
     * between are followed by the test, with the browser context's cookies).
     */
    async function ssoSignIn(
      page: Page,
      workspaceId: string,
      email: string,
      tamper: { authorize?: (url: URL) => void; callback?: (url: URL) => void } = {},
    ): Promise<void> {
      const start = `${base}/console/sso/${workspaceId}?next=${encodeURIComponent('/console/keys')}`;
      if (tamper.authorize) {
        const rewrite = tamper.authorize;
        await page.route(start, async (route) => {
          const response = await route.fetch({ maxRedirects: 0 });
          const location = new URL(response.headers().location as string);
          rewrite(location);
          await route.fulfill({ response, headers: { ...response.headers(), location: location.href } });
        });
      }
      if (tamper.callback) {
        const rewrite = tamper.callback;
        await page.route(
          (url) => url.pathname.startsWith('/interaction/'),
          async (route) => {
            if (route.request().method() !== 'POST') return route.continue();
            let response = await route.fetch({ maxRedirects: 0 });
            let location = response.headers().location as string;
            while (!location.startsWith(base)) {
              response = await page.request.get(new URL(location, route.request().url()).href, { maxRedirects: 0 });
              location = response.headers().location as string;
            }
            const url = new URL(location);
            rewrite(url);
            await route.fulfill({ status: 303, headers: { location: url.href } });
          },
        );
      }
      await page.goto(start);
      await page.locator('input[name="login"]').fill(email);
      await page.locator('input[name="password"]').fill('anything');
      await Promise.all([page.waitForURL((u) => u.href.startsWith(base)), page.locator('button[type="submit"]').click()]);
    }

    it('wsops sso set configures a workspace (secret never printed; --client-secret - reads it from standard input, out of ps) and an admin of the domain signs in through the provider', async () => {
      const out = await cli(
        // biome-ignore format: one option a line
        [
          'sso', 'set', '--workspace', ws,
          '--issuer', provider.issuer,
          '--client-id', provider.clientId,
          '--client-secret', '-',
          '--domain', 'Example.COM',
          '--json',
        ],
        `${provider.clientSecret}\n`,
      );
      const shown = JSON.parse(out);
      assert.equal(shown.sso.issuer, provider.issuer);
      assert.equal(shown.sso.domain, 'example.com');
      assert.equal(shown.sso.redirect_uri, `${base}/console/sso/callback`);
      assert.ok(!out.includes(provider.clientSecret), 'the client secret is never printed');
      await createAdminLink(h.services.database, { workspaceId: ws, email: 'ada@example.com', actor: 'cli', now: h.clock() });
      const page = await (await context()).newPage();
      await ssoSignIn(page, ws, 'ada@example.com');
      assert.equal(new URL(page.url()).pathname, '/console/keys', await page.content());
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign-in security' }).click();
      await page.getByRole('heading', { name: 'Workspace sign-in' }).waitFor();
      assert.match(await page.content(), new RegExp(`issuer <code>${provider.issuer.replace(/[.]/g, '\\.')}</code>`));
      if (dialect === DIALECTS[0]) await axeCheck(page, 'security page with SSO');
      if (dialect === 'sqlite') await screenshot(page, 'security-sso');
    });

    it('an admin sets up single sign-on on the security page (the secret never shown back), and an admin of the domain then signs in through the provider', async () => {
      const w = await h.workspace({ seed: false });
      const link = await createAdminLink(h.services.database, {
        workspaceId: w,
        email: 'grace@example.com',
        actor: 'cli',
        now: h.clock(),
      });
      const page = await (await context()).newPage();
      await page.goto(signInUrl(base, link.token));
      await page.getByLabel('New password').fill(TEST_PASSWORD);
      await page.getByLabel('Repeat the password').fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      await page.waitForURL(`${base}/console`);
      await page.goto('/console/security');
      await page.getByLabel('Issuer').fill('http://sso.example.com');
      await page.getByLabel('Client ID').fill(provider.clientId);
      await page.getByLabel('Client secret').fill(provider.clientSecret);
      await page.getByLabel('Allowed email domain').fill('example.com');
      await page.getByRole('button', { name: 'Set up single sign-on' }).click();
      await page.getByText('The issuer must be an https URL').waitFor();
      assert.equal(await page.getByLabel('Client secret').inputValue(), '', 'the secret is not put back in the page');
      if (dialect === DIALECTS[0]) await axeCheck(page, `single sign-on form refused [${dialect}]`);
      if (dialect === 'sqlite') {
        await page.getByLabel('Issuer').scrollIntoViewIfNeeded();
        await screenshot(page, 'security-sso-form');
      }
      await page.getByLabel('Issuer').fill(provider.issuer);
      await page.getByLabel('Client secret').fill(provider.clientSecret);
      await page.getByRole('button', { name: 'Set up single sign-on' }).click();
      await page.getByText('Single sign-on saved').waitFor();
      assert.ok(!(await page.content()).includes(provider.clientSecret), 'the secret is never shown back');
      if (dialect === DIALECTS[0]) await axeCheck(page, `security page, single sign-on set up [${dialect}]`);
      const page2 = await (await context()).newPage();
      await ssoSignIn(page2, w, 'grace@example.com');
      assert.equal(new URL(page2.url()).pathname, '/console/keys', await page2.content());
    });

    it('wsops sso set refuses a malformed issuer or domain with what to type instead', async () => {
      for (const [flag, value, pattern] of [
        ['--issuer', 'not a url', /is not a URL/],
        ['--issuer', 'http://login.example.com', /must be an https URL/],
        ['--domain', 'not_a_domain', /is not an email domain/],
      ] as const) {
        const args = [
          'sso',
          'set',
          '--workspace',
          ws,
          '--issuer',
          provider.issuer,
          '--client-id',
          'c',
          '--client-secret',
          's',
          '--domain',
          'example.com',
        ];
        args[args.indexOf(flag) + 1] = value;
        await assert.rejects(cli(args), (err: { stderr: string; code: number }) => {
          assert.equal(err.code, 2);
          assert.match(err.stderr, pattern);
          return true;
        });
      }
    });

    it('an address outside the allowed domain is refused, and nobody is signed in', async () => {
      const page = await (await context()).newPage();
      await ssoSignIn(page, ws, 'eve@elsewhere.org');
      assert.match(await page.content(), /eve@elsewhere\.org is outside example\.com/);
      await axeCheck(page, `single sign-on refused [${dialect}]`);
      if (dialect === 'sqlite') await screenshot(page, 'sso-refused');
      assert.equal((await page.goto('/console/keys'))?.url().includes('/console/sign-in'), true);
    });

    it('an unknown address of the domain is refused unless admins are created just in time; then it becomes an admin', async () => {
      const page = await (await context()).newPage();
      await ssoSignIn(page, ws, 'newcomer@example.com');
      assert.match(await page.content(), /newcomer@example\.com is not an admin of this workspace/);
      const jit = await workspaceWith(provider.issuer, provider, true);
      const page2 = await (await context()).newPage();
      await ssoSignIn(page2, jit, 'newcomer@example.com');
      assert.equal(new URL(page2.url()).pathname, '/console/keys');
      const row = await h.services.database.db
        .selectFrom('console_admins')
        .selectAll()
        .where('workspace_id', '=', jit)
        .where('email', '=', 'newcomer@example.com')
        .executeTakeFirstOrThrow();
      assert.equal(row.created_by, 'sso');
    });

    it('a callback with a wrong state is refused', async () => {
      const page = await (await context()).newPage();
      await ssoSignIn(page, ws, 'ada@example.com', { callback: (url) => url.searchParams.set('state', 'forged-state') });
      assert.match(await page.content(), /does not belong to this sign-in \(wrong state\)/);
    });

    it('an ID token with a wrong nonce is refused', async () => {
      const page = await (await context()).newPage();
      await ssoSignIn(page, ws, 'ada@example.com', { authorize: (url) => url.searchParams.set('nonce', 'another-nonce') });
      assert.match(await page.content(), /nonce does not match/);
    });

    it('an expired ID token is refused', async () => {
      const w = await workspaceWith(shortLived.issuer, shortLived);
      await createAdminLink(h.services.database, { workspaceId: w, email: 'ada@example.com', actor: 'cli', now: h.clock() });
      const page = await (await context()).newPage();
      // The token lives 60 seconds; the answer reaches wsops five minutes later.
      await ssoSignIn(page, w, 'ada@example.com', { callback: () => h.clock.advance(5 * 60_000) });
      assert.match(await page.content(), /ID token from the sign-in provider has expired/);
    });

    it('an ID token from another issuer than the configured one is refused', async () => {
      const w = await workspaceWith(impostor.issuer, provider);
      await createAdminLink(h.services.database, { workspaceId: w, email: 'ada@example.com', actor: 'cli', now: h.clock() });
      const page = await (await context()).newPage();
      await ssoSignIn(page, w, 'ada@example.com');
      assert.match(await page.content(), /answer came from another issuer/, 'refused at the iss parameter (RFC 9207)');
      // Without that parameter, the ID token's own iss claim is what gives it away.
      const page2 = await (await context()).newPage();
      await ssoSignIn(page2, w, 'ada@example.com', { callback: (url) => url.searchParams.delete('iss') });
      assert.match(await page2.content(), /ID token came from another issuer/);
    });

    it('with password sign-in switched off, a right password opens nothing and points to single sign-on', async () => {
      const host = new URL(base).host;
      const link = await createAdminLink(h.services.database, {
        workspaceId: ws,
        email: 'pat@example.com',
        actor: 'cli',
        now: h.clock(),
      });
      const form = { 'content-type': 'application/x-www-form-urlencoded', host };
      const set = await h.app.inject({
        method: 'POST',
        url: `/console/link/${link.token}`,
        headers: form,
        payload: encodeForm({ password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
      });
      assert.equal(set.statusCode, 303);
      const a = { email: 'pat@example.com', password: TEST_PASSWORD };
      await cli([
        'sso',
        'set',
        '--workspace',
        ws,
        '--issuer',
        provider.issuer,
        '--client-id',
        provider.clientId,
        '--client-secret',
        provider.clientSecret,
        '--domain',
        'example.com',
        '--password-sign-in',
        'off',
      ]);
      const r = await h.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        headers: form,
        remoteAddress: '10.30.0.1',
        payload: encodeForm({ email: a.email, password: a.password }),
      });
      assert.equal(r.statusCode, 403);
      assert.match(r.body, /single sign-on only/);
      assert.match(r.body, new RegExp(`href="/console/sso/${ws}"`));
      assert.equal(r.headers['set-cookie'], undefined);
      await cli([
        'sso',
        'set',
        '--workspace',
        ws,
        '--issuer',
        provider.issuer,
        '--client-id',
        provider.clientId,
        '--client-secret',
        provider.clientSecret,
        '--domain',
        'example.com',
        '--password-sign-in',
        'on',
      ]);
    });

    const adminRow = (w: string, email: string) =>
      h.services.database.db
        .selectFrom('console_admins')
        .select(['id', 'created_by'])
        .where('workspace_id', '=', w)
        .where('email', '=', email)
        .executeTakeFirst();

    /** Signs in through the claims provider; whether it reached /console/keys, and the page. */
    async function claimSignIn(w: string, email: string): Promise<{ signedIn: boolean; body: string }> {
      const page = await (await context()).newPage();
      await ssoSignIn(page, w, email);
      const body = await page.content();
      const signedIn = new URL(page.url()).pathname === '/console/keys';
      if (!signedIn) assert.equal((await page.goto('/console/keys'))?.url().includes('/console/sign-in'), true, 'no session');
      return { signedIn, body };
    }

    const setClaims = (w: string, extra: string[]) =>
      // biome-ignore format: one option a line
      cli([
        'sso', 'set', '--workspace', w,
        '--issuer', claimsProvider.issuer,
        '--client-id', claimsProvider.clientId,
        '--client-secret', '-',
        '--domain', 'example.com',
        '--json',
        ...extra,
      ], `${claimsProvider.clientSecret}\n`);

    it('only an email_verified claim that is the boolean true signs in: false, "false" and a missing claim are refused, for invited admins and just in time', async () => {
      for (const createAdmins of [false, true]) {
        const w = await h.workspace({ seed: false });
        await setClaims(w, createAdmins ? ['--create-admins'] : []);
        for (const name of ['no', 'text', 'missing', 'yes'] as const) {
          const email = `${name}.${createAdmins ? 'jit' : 'invited'}@example.com`;
          if (!createAdmins) await createAdminLink(h.services.database, { workspaceId: w, email, actor: 'cli', now: h.clock() });
          const { signedIn, body } = await claimSignIn(w, email);
          assert.equal(signedIn, name === 'yes', `${email}: ${body}`);
          if (name === 'missing') assert.match(body, /did not say whether .* is verified \(no email_verified claim\)/);
          else if (name !== 'yes') assert.match(body, /does not say .* is verified \(its email_verified claim is not true\)/);
          if (createAdmins) assert.equal((await adminRow(w, email)) !== undefined, name === 'yes', `${email} made an admin`);
        }
      }
    });

    it('--trust-missing-email-verified accepts an answer without the claim (also just in time), never one that says false; sso show says so', async () => {
      const w = await h.workspace({ seed: false });
      const shown = JSON.parse(await setClaims(w, ['--create-admins', '--trust-missing-email-verified']));
      assert.equal(shown.sso.trust_missing_email_verified, true);
      const human = await cli(['sso', 'show', '--workspace', w]);
      assert.match(human, /email_verified: +true required; an answer without the claim is trusted/);
      assert.equal((await claimSignIn(w, 'missing.trusted@example.com')).signedIn, true);
      assert.equal((await adminRow(w, 'missing.trusted@example.com'))?.created_by, 'sso');
      for (const name of ['no', 'text'] as const) {
        const { signedIn, body } = await claimSignIn(w, `${name}.trusted@example.com`);
        assert.equal(signedIn, false, body);
        assert.equal(await adminRow(w, `${name}.trusted@example.com`), undefined);
      }
      // Set again without the flag: the default (refused) is back.
      assert.equal(JSON.parse(await setClaims(w, ['--create-admins'])).sso.trust_missing_email_verified, false);
      assert.equal((await claimSignIn(w, 'missing.later@example.com')).signedIn, false);
    });

    it('removing an admin who signed in by SSO ends their session at once', async () => {
      const c = await context();
      const page = await c.newPage();
      await ssoSignIn(page, ws, 'ada@example.com');
      assert.equal(new URL(page.url()).pathname, '/console/keys');
      await removeAdmin(h.services.database, { workspaceId: ws, admin: 'ada@example.com', actor: 'cli', now: h.clock() });
      await page.goto('/console/keys');
      assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    });
  });
}
