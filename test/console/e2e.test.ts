/**
 * The console end to end, in real Chromium against a real `wsops serve` process, once per
 * database dialect: an office administrator follows the CLI's sign-in link, creates and copies
 * a key, reads the API with it, registers an endpoint and watches it become active, rotates its
 * secret, sees a failed delivery and resends it, revokes the key. Then the refusals a user
 * relies on: CSRF, markup as text, sign-in throttling, cookie and key kept apart, workspaces
 * kept apart. axe-core runs on every page visited; screenshots are written with
 * WSOPS_SCREENSHOTS=1 (SQLite run only).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
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
import { Receiver } from '../helpers/receiver.js';

const PASSWORD = 'correct horse battery staple';
/** Polling bound for what the dispatcher does in the background (verification, deliveries). */
const DELIVERY_WAIT_MS = 30_000;

let browser: TestBrowser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

for (const dialect of DIALECTS) {
  describe(`the console in Chromium [${dialect}]`, () => {
    let server: ConsoleServer;
    let rx: Receiver;
    let workspaceId: string;
    const contexts: BrowserContext[] = [];
    /** Dialogs any page opened (an alert would mean injected markup ran). */
    const dialogs: string[] = [];

    /**
     * axe on every page, its serious/critical violations collected (each test asserts none at
     * its end, so one run lists every page's problems); screenshots once (SQLite run).
     */
    let violations: string[] = [];
    const visit = async (page: Page, name: string) => {
      // A page's accessibility does not depend on the database: axe runs on the first dialect only.
      if (dialect === DIALECTS[0]) violations.push(...(await axeViolations(page, `${name} [${dialect}]`)));
      if (dialect === 'sqlite') await screenshot(page, name);
    };
    beforeEach(() => {
      violations = [];
    });
    /** Follows a link of the main navigation. */
    const nav = async (page: Page, label: string) => {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
      await page.waitForLoadState();
    };
    const assertAccessible = () => {
      const found = violations;
      violations = [];
      assert.deepEqual(found, [], `axe-core: no serious or critical violation on any page visited:\n${found.join('\n')}`);
    };

    const newPage = async (): Promise<Page> => {
      const context = await browser.context(server.baseUrl);
      contexts.push(context);
      const page = await context.newPage();
      page.on('dialog', (d) => {
        dialogs.push(`${d.type()}: ${d.message()}`);
        // Confirmations (revoke, rotate, disable) are the user's "OK"; anything else is dismissed.
        void (d.type() === 'confirm' ? d.accept() : d.dismiss());
      });
      return page;
    };

    /** A new admin of the workspace via the CLI's one-time link; returns the link. */
    const adminLink = async (ws: string, email: string): Promise<string> => {
      const out = await server.cliJson(['admin', 'create', '--workspace', ws, '--email', email]);
      assert.match(out.sign_in_url, new RegExp(`^${server.baseUrl}/console/link/`), 'the link is built on WSOPS_BASE_URL');
      return out.sign_in_url as string;
    };

    /** Signs in through the sign-in form (email and password). */
    const signIn = async (page: Page, email: string) => {
      await page.goto('/console/sign-in');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((u) => !u.pathname.startsWith('/console/sign-in'));
    };

    /**
     * A signed-in page for a new admin of `ws`. The password is chosen by posting the link's form
     * directly (the browser path of the link page is the flow test's subject), then the admin
     * signs in through the sign-in form in the browser.
     */
    const signedIn = async (ws: string, email: string): Promise<Page> => {
      const page = await newPage();
      const link = await adminLink(ws, email);
      const set = await page.request.post(link, { form: { password: PASSWORD, confirm: PASSWORD }, maxRedirects: 0 });
      assert.equal(set.status(), 303, `choosing the password through ${link}`);
      await page.context().clearCookies();
      await signIn(page, email);
      return page;
    };

    const api = (path: string, key: string) => fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });

    /** Reloads until the text is in `where` (default: the main content), polling with a bound. */
    const reloadUntil = async (page: Page, text: RegExp, what: string, where = () => page.locator('main')) => {
      await until(
        async () => {
          await page.reload();
          const target = where();
          return (await target.count()) > 0 && text.test(await target.first().innerText());
        },
        DELIVERY_WAIT_MS,
        what,
        250,
      );
    };

    before(async () => {
      [server, rx] = await Promise.all([startConsoleServer(dialect), new Receiver().start()]);
      workspaceId = (await server.cliJson(['workspace', 'create', '--name', 'Acme Facilities'])).id;
      await server.cli(['seed', '--workspace', workspaceId]);
    });
    after(async () => {
      for (const c of contexts) await c.close().catch(() => {});
      await rx?.stop();
      await server?.stop();
    });

    it('an office administrator follows the CLI link, sets a password, creates and copies a key, reads the API with it, registers an endpoint that becomes active, rotates its secret, resends a failed delivery, and revokes the key (the API then answers 401)', async () => {
      // The one-time link: choose a password, land signed in on the Overview.
      const link = await adminLink(workspaceId, 'office@acme.example');
      const page = await newPage();
      await page.goto(link);
      await assert.doesNotReject(page.getByRole('heading', { name: 'Choose a password' }).waitFor());
      await visit(page, 'set-password');
      await page.getByLabel('New password').fill(PASSWORD);
      await page.getByLabel('Repeat the password').fill(PASSWORD);
      await page.getByRole('button', { name: /set password/i }).click();
      await page.waitForURL(`${server.baseUrl}/console`);
      await visit(page, 'overview');

      // The link was used once: following it again is refused in words.
      const again = await (await newPage()).goto(link);
      assert.equal(again?.status(), 410);
      assert.match(await (again?.text() ?? Promise.resolve('')), /not usable|already used|expired/i);

      // Create a key: name, scope checkbox with its description, environment, life in days.
      await nav(page, 'API keys');
      await page.waitForURL(/\/console\/keys$/);
      await visit(page, 'keys');
      await page.getByLabel('Name', { exact: true }).fill('Intranet directory sync');
      await page.getByRole('checkbox', { name: /^assets:read / }).check();
      assert.equal(await page.getByLabel('Life in days').inputValue(), '90', 'the life defaults to 90 days');
      await page.getByRole('button', { name: 'Create key' }).click();
      const keyField = page.getByLabel('API key', { exact: true });
      const key = await keyField.inputValue();
      assert.match(key, /^svc_sk_test_[0-9A-Za-z]{16}_[0-9A-Za-z]{43}$/, 'the full key is shown once');
      await assert.doesNotReject(
        page
          .getByText(/won.t see it again|shown only once/i)
          .first()
          .waitFor(),
        'a warning says it is shown once',
      );
      assert.match(await page.locator('main').innerText(), /\b1 of 20 keys\b/, "the plan's limit is shown");
      await visit(page, 'key-created');

      // The copy button puts the key on the clipboard.
      await page.getByRole('button', { name: 'Copy' }).first().click();
      const copied = await until(
        () => page.evaluate(() => navigator.clipboard.readText()).catch(() => ''),
        5000,
        'the copied key on the clipboard',
      );
      assert.equal(copied, key);

      // The key reads the API, in the same test.
      const listed = await api('/api/v1/assets?limit=2', key);
      assert.equal(listed.status, 200);
      assert.equal(((await listed.json()) as { data: unknown[] }).data.length, 2);

      // Afterwards only the key_id is shown.
      await page.goto('/console/keys');
      assert.ok(!(await page.content()).includes(key), 'the full key is never shown again');
      const keyId = key.split('_')[3] ?? ''; // svc_sk_<env>_<key_id>_<secret>
      const row = page.getByRole('row', { name: /Intranet directory sync/ });
      assert.match(await row.innerText(), /valid/i, 'the list shows the key as valid');

      // Register an endpoint at a receiver on 127.0.0.1; a refused form first.
      let failing = false;
      rx.on('/hook', (_req, res, body) => {
        const type = (JSON.parse(body) as { type: string }).type;
        if (failing && type === 'endpoint.test') res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver down');
        else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
      await nav(page, 'Webhooks');
      await page.waitForURL(/\/console\/webhooks$/);
      await visit(page, 'webhooks-empty');
      await page
        .getByRole('link', { name: /register an endpoint/i })
        .first()
        .click();
      await page.waitForURL(/\/console\/webhooks\/new$/);
      await visit(page, 'webhook-new');
      await page.getByLabel('Endpoint URL').fill(rx.url('/hook'));
      await page.getByRole('checkbox', { name: /^asset\.assigned / }).check();
      const refused = page.waitForResponse((r) => r.url().endsWith('/console/webhooks/new') && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Register endpoint' }).click();
      assert.equal((await refused).status(), 400, 'an event its scopes do not cover is refused');
      assert.match(await page.locator('main').innerText(), /assets:read/, 'the refusal names the missing scope');
      assert.equal(await page.getByLabel('Endpoint URL').inputValue(), rx.url('/hook'), 'the refused form keeps what the user typed');
      assert.ok(await page.getByRole('checkbox', { name: /^asset\.assigned / }).isChecked(), 'and the events ticked');
      await visit(page, 'webhook-refused');
      await page.getByRole('checkbox', { name: /^assets:read / }).check();
      await page.getByRole('button', { name: 'Register endpoint' }).click();
      const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
      assert.match(secret, /^\S{20,}$/, 'the signing secret is shown once');
      await visit(page, 'webhook-registered');
      await page.getByRole('link', { name: /go to the endpoint/i }).click();
      await page.waitForURL(/\/console\/webhooks\/we_[^/]+$/);
      const endpointUrl = page.url();
      await reloadUntil(page, /\bActive\b/, 'the endpoint to become active after its verification');
      assert.match(await page.locator('main').innerText(), /Verified/);
      await visit(page, 'endpoint');

      // Rotate the secret: the new one is shown once, and differs.
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      await assert.doesNotReject(page.getByText(/Secret rotated/).waitFor());
      const rotated = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
      assert.notEqual(rotated, secret);

      // A failed delivery (the receiver answers 500 to the test event), then resend it.
      failing = true;
      await page.goto(endpointUrl);
      await page.getByRole('button', { name: 'Send test event' }).click();
      await assert.doesNotReject(page.getByText(/Test event queued/).waitFor());
      await page.goto(`${endpointUrl}/deliveries`);
      const testDelivery = () => page.getByRole('article').filter({ hasText: 'endpoint.test' });
      await reloadUntil(page, /Failed \(500\)/, 'the failed attempt of the test event', testDelivery);
      assert.match(await page.locator('main').innerText(), /receiver down/, 'the response snippet is shown');
      await visit(page, 'deliveries');
      failing = false;
      await testDelivery().first().getByRole('button', { name: 'Resend now' }).click();
      await assert.doesNotReject(page.getByText(/Delivery resent/).waitFor());
      await reloadUntil(page, /Succeeded \(200\)/, 'the resent test event to succeed', testDelivery);
      const tests = rx.at('/hook').filter((r) => (JSON.parse(r.body) as { type: string }).type === 'endpoint.test');
      assert.ok(tests.length >= 2, 'the receiver got the test event twice');
      assert.equal(new Set(tests.map((r) => (JSON.parse(r.body) as { id: string }).id)).size, 1, 'the resend carries the same event id');
      const deliveryIds = new Set(tests.map((r) => r.headers['x-service-delivery']));
      assert.equal(deliveryIds.size, tests.length, 'each attempt has its own delivery id');

      // The other pages: webhooks list, audit trail, modules, admins.
      await page.goto('/console/webhooks');
      assert.match(await page.locator('main').innerText(), /1 of 5/, 'the five-endpoint limit is shown');
      await visit(page, 'webhooks');
      await nav(page, 'Audit trail');
      await page.waitForURL(/\/console\/audit/);
      const audit = await page.locator('main').innerText();
      assert.ok(audit.includes(keyId), 'the audit trail names the created key by key_id');
      assert.match(audit, /office@acme\.example/, 'and who did it');
      await visit(page, 'audit');
      await nav(page, 'Modules');
      await page.waitForURL(/\/console\/modules/);
      await visit(page, 'modules');
      await nav(page, 'Admins');
      await page.waitForURL(/\/console\/admins/);
      assert.match(await page.locator('main').innerText(), /office@acme\.example/);
      await visit(page, 'admins');

      // Revoke the key with a confirmation; the API then answers 401.
      await page.goto('/console/keys');
      await page.getByRole('link', { name: `Revoke key ${keyId}` }).click();
      await page.waitForURL(/\/revoke$/);
      await visit(page, 'key-revoke');
      await page.getByRole('button', { name: `Revoke key ${keyId}` }).click();
      await assert.doesNotReject(
        page
          .getByText(/revoked/i)
          .first()
          .waitFor(),
      );
      assert.match(await page.getByRole('row', { name: /Intranet directory sync/ }).innerText(), /revoked/i);
      assert.equal((await api('/api/v1/assets?limit=2', key)).status, 401);

      // Sign out; the sign-in page, then sign in again with email and password.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/console\/sign-in/);
      await visit(page, 'sign-in');
      await page.goto('/console/keys');
      assert.match(page.url(), /\/console\/sign-in/, 'signed out, the console sends to sign-in');
      await page.getByLabel('Email').fill('office@acme.example');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/console\/keys$/);
      assert.deepEqual(
        dialogs.filter((d) => !d.startsWith('confirm')),
        [],
      );
      assertAccessible();
    });

    it('a tampered CSRF token is refused with a clear page and changes nothing', async () => {
      const page = await signedIn(workspaceId, 'csrf@acme.example');
      await page.goto('/console/keys');
      await page.getByLabel('Name', { exact: true }).fill('Forged by another site');
      await page.getByRole('checkbox', { name: /^assets:read / }).check();
      await page.evaluate(() => {
        for (const f of document.querySelectorAll<HTMLInputElement>('form[action="/console/keys"] input[name="_csrf"]'))
          f.value = 'tampered';
      });
      const response = page.waitForResponse((r) => r.url().endsWith('/console/keys') && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Create key' }).click();
      const r = await response;
      assert.equal(r.status(), 403);
      assert.match(await page.locator('body').innerText(), /(security|csrf|form).*(expired|invalid|token|again)|reload/i);
      const keys = (await server.cliJson(['key', 'list', '--workspace', workspaceId])) as { name: string }[];
      assert.ok(!keys.some((k) => k.name === 'Forged by another site'), 'no key was created');
      await visit(page, 'csrf-refused');
      assertAccessible();
    });

    it('a key name with markup is shown as text on every page and never runs', async () => {
      const page = await signedIn(workspaceId, 'markup@acme.example');
      const name = '<img src=x onerror=alert(1)>';
      const before = dialogs.length;
      await page.goto('/console/keys');
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByRole('checkbox', { name: /^assets:read / }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByLabel('API key', { exact: true }).waitFor();
      await page.goto('/console/keys');
      await assert.doesNotReject(page.getByRole('cell', { name, exact: true }).first().waitFor(), 'the name appears literally in the list');
      assert.equal(await page.locator('main img').count(), 0, 'no image element was made of it');
      await page
        .getByRole('row', { name: /onerror/ })
        .getByRole('link', { name: /Revoke/ })
        .click();
      await page.waitForURL(/\/revoke$/);
      assert.ok((await page.locator('main').innerText()).includes(name), 'the confirmation shows it literally too');
      assert.equal(await page.locator('main img').count(), 0);
      assert.deepEqual(dialogs.slice(before), [], 'no dialog fired');
    });

    it('repeated wrong passwords are throttled: sign-in is paused with a message saying so, even for the right password', async () => {
      const page = await signedIn(workspaceId, 'throttled@acme.example');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/console\/sign-in/);
      const attempt = async (password: string) => {
        await page.getByLabel('Email').fill('throttled@acme.example');
        await page.getByLabel('Password').fill(password);
        const response = page.waitForResponse((r) => r.url().endsWith('/console/sign-in') && r.request().method() === 'POST');
        await page.getByRole('button', { name: 'Sign in' }).click();
        return (await response).status();
      };
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push(await attempt(`wrong password ${i}`));
      assert.deepEqual(statuses, [401, 401, 401, 401, 401]);
      assert.equal(await attempt(`wrong password again`), 429);
      assert.match(await page.locator('main').innerText(), /too many wrong passwords.*try again/is);
      assert.equal(await attempt(PASSWORD), 429, 'while paused, even the right password does not sign in');
      assert.match(page.url(), /\/console\/sign-in/);
      await visit(page, 'sign-in-throttled');
      assertAccessible();
    });

    it('a console session cookie does not open the API, and an API key does not open the console', async () => {
      const page = await signedIn(workspaceId, 'apart@acme.example');
      const cookies = await page.context().cookies();
      const session = cookies.find((c) => c.path === '/console');
      assert.ok(session, 'the session cookie is scoped to Path=/console');
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Lax');
      const withCookie = await fetch(`${server.baseUrl}/api/v1/assets?limit=1`, {
        headers: { cookie: `${session.name}=${session.value}` },
      });
      assert.equal(withCookie.status, 401, 'the API reads no cookie');
      const created = await server.cliJson(['key', 'create', '--workspace', workspaceId, '--scopes', 'assets:read']);
      assert.equal((await api('/api/v1/assets?limit=1', created.key)).status, 200);
      const withKey = await fetch(`${server.baseUrl}/console/keys`, {
        headers: { authorization: `Bearer ${created.key}` },
        redirect: 'manual',
      });
      assert.ok([302, 303].includes(withKey.status), `the console redirects to sign-in (got ${withKey.status})`);
      assert.match(withKey.headers.get('location') ?? '', /\/console\/sign-in/);
      const keyPage = await newPage();
      await keyPage.context().setExtraHTTPHeaders({ authorization: `Bearer ${created.key}` });
      await keyPage.goto('/console/keys');
      assert.match(keyPage.url(), /\/console\/sign-in/);
    });

    it("a second workspace's admin sees nothing of the first: no keys, no endpoints, and the first's ids by URL are not found", async () => {
      const firstKey = await server.cliJson([
        'key',
        'create',
        '--workspace',
        workspaceId,
        '--scopes',
        'assets:read',
        '--name',
        'First only',
      ]);
      const firstEndpoint = await server.cliJson([
        'endpoint',
        'create',
        '--workspace',
        workspaceId,
        '--url',
        rx.url('/first'),
        '--scopes',
        'assets:read',
        '--events',
        'asset.assigned',
      ]);
      const other = (await server.cliJson(['workspace', 'create', '--name', 'Other Company'])).id as string;
      const page = await signedIn(other, 'admin@other.example');
      await page.goto('/console/keys');
      const keys = await page.locator('main').innerText();
      assert.ok(!keys.includes(firstKey.key_id) && !keys.includes('First only'), "the first workspace's keys are not listed");
      await page.goto('/console/webhooks');
      const hooks = await page.content();
      assert.ok(!hooks.includes(firstEndpoint.id) && !hooks.includes('/first'), "the first workspace's endpoints are not listed");
      for (const path of [
        `/console/webhooks/${firstEndpoint.id}`,
        `/console/webhooks/${firstEndpoint.id}/deliveries`,
        `/console/keys/${firstKey.key_id}/revoke`,
      ]) {
        const r = await page.goto(path);
        assert.equal(r?.status(), 404, `${path} is not found for another workspace`);
      }
      // A forged form post with the other workspace's key id changes nothing.
      await page.goto('/console/keys');
      const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
      const forged = await page.request.post(`/console/keys/${firstKey.key_id}/revoke`, { form: { _csrf: csrf }, maxRedirects: 0 });
      assert.equal(forged.status(), 404);
      assert.equal((await api('/api/v1/assets?limit=1', firstKey.key)).status, 200, "the first workspace's key still works");
      await page.goto(`/console/webhooks/${firstEndpoint.id}`);
      await visit(page, 'not-found');
      assertAccessible();
    });
  });
}
