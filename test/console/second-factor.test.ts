/**
 * A second factor for console admins: the authenticator app (TOTP) with one-time recovery
 * codes, the second sign-in step, its throttle, and the workspace setting that requires one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { totpCode } from '../../src/sign-in/second-factor.js';
import { createAdminLink } from '../../src/sign-in/sign-in-links.js';
import { encodeForm, type SignedInAdmin, sessionCookieOf, signedInAdmin, TEST_PASSWORD } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { readSvgQr } from '../helpers/qr.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const STEP = 30_000;

function field(body: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(body) ?? new RegExp(`id="${name}"[^>]*value="([^"]*)"`).exec(body);
  assert.ok(m, `no ${name} field in the page`);
  return (m[1] as string)
    .replace(/&amp;/g, '&')
    .replace(/&#x2F;/g, '/')
    .replace(/&#x3D;/g, '=');
}

for (const dialect of DIALECTS) {
  describe(`console second factor [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace({ seed: false });
    });
    after(() => h.close());

    /** Turns the authenticator app on for an admin; returns its secret and recovery codes. */
    async function enrol(a: SignedInAdmin): Promise<{ secret: string; codes: string[] }> {
      const start = await a.post('/console/security/totp/start');
      assert.equal(start.status, 200);
      const secret = field(start.body, 'totp-secret');
      assert.match(secret, /^[A-Z2-7]{32}$/);
      const sealed = field(start.body, 'sealed');
      const done = await a.post('/console/security/totp', { sealed, code: totpCode(secret, h.clock()) });
      assert.equal(done.status, 201, done.body);
      const codes = [...done.body.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1] as string);
      // The code used to enrol is spent: move past its step.
      h.clock.advance(STEP);
      return { secret, codes };
    }

    const signIn = (email: string, ip: string, password = TEST_PASSWORD) =>
      h.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        headers: FORM,
        remoteAddress: ip,
        payload: encodeForm({ email, password, next: '/console/keys' }),
      });

    /** Signs in with the password; returns the pending cookie and its CSRF token. */
    async function passwordStep(email: string, ip: string) {
      const r = await signIn(email, ip);
      assert.equal(r.statusCode, 303, r.body);
      assert.equal(r.headers.location, '/console/sign-in/second-factor?next=%2Fconsole%2Fkeys');
      const cookie = sessionCookieOf(r.headers) as string;
      const page = await h.app.inject({ method: 'GET', url: r.headers.location as string, headers: { cookie } });
      assert.equal(page.statusCode, 200);
      return { cookie, csrf: field(page.body, '_csrf') };
    }

    const giveCode = (pending: { cookie: string; csrf: string }, code: string, ip: string) =>
      h.app.inject({
        method: 'POST',
        url: '/console/sign-in/second-factor',
        headers: { ...FORM, cookie: pending.cookie },
        remoteAddress: ip,
        payload: encodeForm({ _csrf: pending.csrf, code, next: '/console/keys' }),
      });

    const open = (url: string, cookie: string) => h.app.inject({ method: 'GET', url, headers: { cookie } });

    it('enrolling an authenticator app needs a right code from it, shows ten recovery codes once, and stores the secret sealed', async () => {
      const a = await signedInAdmin(h, ws);
      const start = await a.post('/console/security/totp/start');
      const secret = field(start.body, 'totp-secret');
      const sealed = field(start.body, 'sealed');
      // The QR code, drawn on the server, is what an authenticator scans: the same key as the text.
      const svg = /<figure class="totp-qr"[\s\S]*?(<svg[\s\S]*?<\/svg>)/.exec(start.body)?.[1];
      assert.ok(svg, 'a QR code is on the setup page');
      assert.doesNotMatch(start.body, /<img[^>]+src="https?:/, 'no image from an outside service');
      const scanned = readSvgQr(svg);
      assert.ok(scanned, 'the QR code decodes');
      const uri = new URL(scanned);
      assert.equal(uri.protocol, 'otpauth:');
      assert.equal(uri.searchParams.get('secret'), secret, 'the QR code carries the key shown as text beside it');
      const wrong = await a.post('/console/security/totp', {
        sealed,
        code: '000000' === totpCode(secret, h.clock()) ? '111111' : '000000',
      });
      assert.equal(wrong.status, 400);
      assert.match(wrong.body, /does not match the key/);
      const other = await signedInAdmin(h, ws);
      const stolen = await other.post('/console/security/totp', { sealed, code: totpCode(secret, h.clock()) });
      assert.equal(stolen.status, 400, "one admin's setup form cannot enrol another");
      const done = await a.post('/console/security/totp', { sealed, code: totpCode(secret, h.clock()) });
      assert.equal(done.status, 201);
      assert.match(done.body, /shown only once/);
      assert.equal([...done.body.matchAll(/<li><code>[a-z0-9]{5}-[a-z0-9]{5}<\/code><\/li>/g)].length, 10);
      const row = await h.services.database.db
        .selectFrom('admin_totp')
        .selectAll()
        .where('admin_id', '=', a.adminId)
        .executeTakeFirstOrThrow();
      assert.ok(!row.secret_ciphertext.includes(secret), 'the secret is not stored in the clear');
      const again = await a.get('/console/security');
      assert.doesNotMatch(again.body, /shown only once/, 'the recovery codes are not shown again');
      assert.match(again.body, /10 unused codes left/);
    });

    it('with the app on, the password opens only the second step; a right code opens the console with a new session', async () => {
      const a = await signedInAdmin(h, ws);
      const { secret } = await enrol(a);
      const pending = await passwordStep(a.email, '10.20.0.1');
      const blocked = await open('/console/keys', pending.cookie);
      assert.equal(blocked.statusCode, 303, 'a pending session opens no page');
      assert.equal(blocked.headers.location, '/console/sign-in/second-factor?next=%2Fconsole%2Fkeys');
      const r = await giveCode(pending, totpCode(secret, h.clock()), '10.20.0.1');
      assert.equal(r.statusCode, 303, r.body);
      assert.equal(r.headers.location, '/console/keys');
      const full = sessionCookieOf(r.headers) as string;
      assert.ok(full && full !== pending.cookie, 'a new session id after the second factor');
      assert.equal((await open('/console/keys', full)).statusCode, 200);
      assert.equal((await open('/console/keys', pending.cookie)).statusCode, 303, 'the pending session is gone');
    });

    it('a TOTP code replayed within its window is refused with the reason; the next code works', async () => {
      const a = await signedInAdmin(h, ws);
      const { secret } = await enrol(a);
      const code = totpCode(secret, h.clock());
      const first = await giveCode(await passwordStep(a.email, '10.21.0.1'), code, '10.21.0.1');
      assert.equal(first.statusCode, 303);
      h.clock.advance(5_000);
      const replay = await giveCode(await passwordStep(a.email, '10.21.0.1'), code, '10.21.0.1');
      assert.equal(replay.statusCode, 401);
      assert.match(replay.body, /already used/);
      assert.equal(sessionCookieOf(replay.headers), undefined);
      h.clock.advance(STEP);
      const next = await giveCode(await passwordStep(a.email, '10.21.0.1'), totpCode(secret, h.clock()), '10.21.0.1');
      assert.equal(next.statusCode, 303);
    });

    it('a recovery code signs in once; used again it is refused', async () => {
      const a = await signedInAdmin(h, ws);
      const { codes } = await enrol(a);
      const code = codes[3] as string;
      const ok = await giveCode(await passwordStep(a.email, '10.22.0.1'), code.toUpperCase().replace('-', ' '), '10.22.0.1');
      assert.equal(ok.statusCode, 303, 'typed in capitals with a space, it still works');
      const again = await giveCode(await passwordStep(a.email, '10.22.0.1'), code, '10.22.0.1');
      assert.equal(again.statusCode, 401);
      assert.match(again.body, /not one of your unused recovery codes/);
      assert.match((await a.get('/console/security')).body, /9 unused codes left/);
      const audit = await h.services.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('action', '=', 'admin.recovery_code_used')
        .where('target', '=', a.adminId)
        .execute();
      assert.equal(audit.length, 1);
    });

    it('wrong codes are throttled like passwords: after 5 from one address the right code waits too', async () => {
      const a = await signedInAdmin(h, ws);
      const { secret } = await enrol(a);
      const pending = await passwordStep(a.email, '10.23.0.1');
      const right = totpCode(secret, h.clock());
      const wrong = right === '123456' ? '654321' : '123456';
      for (let i = 0; i < 5; i++) assert.equal((await giveCode(pending, wrong, '10.23.0.1')).statusCode, 401);
      const blocked = await giveCode(pending, right, '10.23.0.1');
      assert.equal(blocked.statusCode, 429);
      assert.match(blocked.body, /Too many wrong codes/);
      assert.ok(Number(blocked.headers['retry-after']) > 0);
    });

    it('someone who knows the password cannot lock the owner out of the second step: 11 addresses are held after 50 wrong codes, the owner gets in from an address they signed in from', async () => {
      const a = await signedInAdmin(h, ws);
      const { secret, codes } = await enrol(a);
      // The owner completes a sign-in from their usual address (with a recovery code: the current TOTP step stays unused).
      const usual = '10.24.0.1';
      assert.equal((await giveCode(await passwordStep(a.email, usual), codes[0] as string, usual)).statusCode, 303);
      const right = totpCode(secret, h.clock());
      const wrong = right === '123456' ? '654321' : '123456';
      const statuses: number[] = [];
      for (let i = 1; i <= 11; i++) {
        const ip = `10.25.0.${i}`;
        const pending = await passwordStep(a.email, ip);
        for (let j = 0; j < 5; j++) statuses.push((await giveCode(pending, wrong, ip)).statusCode);
      }
      assert.deepEqual(
        { 401: statuses.filter((s) => s === 401).length, 429: statuses.filter((s) => s === 429).length },
        { 401: 50, 429: 5 },
        'the admin-wide budget is spent',
      );
      // Held: an attacker's address even with the right code, and a new address.
      assert.equal((await giveCode(await passwordStep(a.email, '10.25.0.1'), right, '10.25.0.1')).statusCode, 429);
      assert.equal((await giveCode(await passwordStep(a.email, '10.25.0.99'), wrong, '10.25.0.99')).statusCode, 429);
      // The owner, from the address they signed in from: the app's code, then a recovery code.
      const owner = await giveCode(await passwordStep(a.email, usual), right, usual);
      assert.equal(owner.statusCode, 303, owner.body);
      assert.equal(owner.headers.location, '/console/keys');
      assert.equal((await open('/console/keys', sessionCookieOf(owner.headers) as string)).statusCode, 200);
      assert.equal((await giveCode(await passwordStep(a.email, usual), codes[1] as string, usual)).statusCode, 303);
    });

    it('a right password alone does not make an address known to the second step', async () => {
      const a = await signedInAdmin(h, ws);
      const { secret } = await enrol(a);
      const wrong = totpCode(secret, h.clock()) === '123456' ? '654321' : '123456';
      // A right password from this address, and nothing more.
      await passwordStep(a.email, '10.26.0.50');
      for (let i = 1; i <= 10; i++) {
        const ip = `10.26.0.${i}`;
        const pending = await passwordStep(a.email, ip);
        for (let j = 0; j < 5; j++) await giveCode(pending, wrong, ip);
      }
      // Every one of them gave the right password, none a right second factor: all held by the admin-wide budget.
      const pending = await passwordStep(a.email, '10.26.0.50');
      assert.equal((await giveCode(pending, wrong, '10.26.0.50')).statusCode, 429);
    });

    it('a new sign-in link (forgotten password) does not skip the second factor', async () => {
      const a = await signedInAdmin(h, ws);
      await enrol(a);
      const link = await createAdminLink(h.services.database, {
        workspaceId: ws,
        email: a.email,
        actor: 'cli',
        now: h.clock(),
      });
      const r = await h.app.inject({
        method: 'POST',
        url: `/console/link/${link.token}`,
        headers: FORM,
        payload: encodeForm({ password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
      });
      assert.equal(r.statusCode, 303);
      assert.equal(r.headers.location, '/console/sign-in/second-factor');
      assert.equal((await open('/console/keys', sessionCookieOf(r.headers) as string)).statusCode, 303);
    });

    it('turning the app off needs a current code', async () => {
      const a = await signedInAdmin(h, ws);
      const { secret } = await enrol(a);
      const refused = await a.post('/console/security/totp/disable', { code: '' });
      assert.equal(refused.status, 400);
      assert.match(refused.body, /not right/);
      const ok = await a.post('/console/security/totp/disable', { code: totpCode(secret, h.clock()) });
      assert.equal(ok.status, 200);
      assert.match(ok.body, /Authenticator app turned off/);
      const r = await signIn(a.email, '10.24.0.1');
      assert.equal(r.headers.location, '/console/keys', 'no second step any more');
    });

    it('a workspace can require a second factor: admins without one are sent to set one up, and get in once they have', async () => {
      const w = await h.workspace({ seed: false });
      const owner = await signedInAdmin(h, w);
      const other = await signedInAdmin(h, w);
      const early = await owner.post('/console/security/require', { required: 'yes' });
      assert.equal(early.status, 409, 'not before you have one yourself');
      assert.match(early.body, /Set up your own second factor first/);
      await enrol(owner);
      const on = await owner.post('/console/security/require', { required: 'yes' });
      assert.equal(on.status, 200);
      assert.match(on.body, /now required/);
      const sent = await other.get('/console/keys');
      assert.equal(sent.status, 303);
      assert.equal(sent.location, '/console/security?enrol=required');
      const page = await other.get(sent.location);
      assert.equal(page.status, 200);
      assert.match(page.body, /Your workspace requires a second factor/);
      const { secret } = await enrol(other);
      assert.equal((await other.get('/console/keys')).status, 200);
      const off = await other.post('/console/security/totp/disable', { code: totpCode(secret, h.clock()) });
      assert.equal(off.status, 409, 'the only factor cannot be removed while one is required');
      const audit = await h.services.database.db
        .selectFrom('audit_events')
        .select('action')
        .where('workspace_id', '=', w)
        .where('action', '=', 'workspace.second_factor_required')
        .execute();
      assert.equal(audit.length, 1);
    });
  });
}
