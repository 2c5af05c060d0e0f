/**
 * Passkeys (WebAuthn) as a second factor of console admins, at the HTTP level with a software
 * authenticator that signs for real (ES256, node:crypto): registration on the security page,
 * the sign-in step, removal, the workspace rule, and every refusal the issue lists: a replayed
 * or expired challenge, an answer for another origin, an unknown credential, a signature
 * counter that goes back (a cloned authenticator), and the throttle.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { passkeysUnavailable } from '../../src/sign-in/webauthn.js';
import { encodeForm, type SignedInAdmin, sessionCookieOf, signedInAdmin, TEST_PASSWORD } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const BASE = 'http://localhost:8080';
const ORIGIN = 'http://localhost:8080';

function field(body: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(body);
  assert.ok(m, `no ${name} field in the page`);
  return m[1] as string;
}

describe('where passkeys can work', () => {
  it('a console at an IP address or over plain http elsewhere than localhost is told why passkeys cannot work there', () => {
    assert.match(passkeysUnavailable('http://10.0.0.5:8080') ?? '', /an IP address/);
    assert.match(passkeysUnavailable('http://console.example.com') ?? '', /over https/);
    assert.equal(passkeysUnavailable('https://console.example.com'), undefined);
    assert.equal(passkeysUnavailable('http://localhost:8080'), undefined);
  });
});

for (const dialect of DIALECTS) {
  describe(`console passkeys [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_BASE_URL: BASE });
      ws = await h.workspace({ seed: false });
    });
    after(() => h.close());

    const authenticator = () => new SoftwareAuthenticator('localhost', ORIGIN);

    /** Asks for options as console.js does (a form post with the CSRF token); returns the JSON. */
    async function options(url: string, cookie: string, csrf: string, ip = '10.40.0.1') {
      const r = await h.app.inject({
        method: 'POST',
        url,
        headers: { ...FORM, cookie },
        remoteAddress: ip,
        payload: encodeForm({ _csrf: csrf }),
      });
      assert.equal(r.statusCode, 200, r.body);
      assert.match(String(r.headers['content-type']), /application\/json/);
      return JSON.parse(r.body) as { challenge: string; rp?: { id: string }; allowCredentials?: { id: string }[] };
    }

    /** Registers a passkey of `key` for the admin under `name`; returns the page. */
    async function register(a: SignedInAdmin, key: SoftwareAuthenticator, name = 'Work laptop') {
      const o = await options('/console/security/passkeys/options', a.cookie, a.csrf);
      assert.equal(o.rp?.id, 'localhost', 'the RP ID is the host name of WSOPS_BASE_URL');
      return a.post('/console/security/passkeys', { name, response: key.register(o) });
    }

    const signIn = (email: string, ip: string) =>
      h.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        headers: FORM,
        remoteAddress: ip,
        payload: encodeForm({ email, password: TEST_PASSWORD, next: '/console/keys' }),
      });

    /** The password step: returns the pending session's cookie and CSRF token. */
    async function passwordStep(email: string, ip: string) {
      const r = await signIn(email, ip);
      assert.equal(r.headers.location, '/console/sign-in/second-factor?next=%2Fconsole%2Fkeys');
      const cookie = sessionCookieOf(r.headers) as string;
      const page = await h.app.inject({ method: 'GET', url: r.headers.location as string, headers: { cookie } });
      assert.match(page.body, /Use a passkey/);
      return { cookie, csrf: field(page.body, '_csrf') };
    }

    const signInOptions = (pending: { cookie: string; csrf: string }, ip: string) =>
      options('/console/sign-in/second-factor/passkey/options', pending.cookie, pending.csrf, ip);

    const giveAnswer = (pending: { cookie: string; csrf: string }, response: string, ip: string) =>
      h.app.inject({
        method: 'POST',
        url: '/console/sign-in/second-factor',
        headers: { ...FORM, cookie: pending.cookie },
        remoteAddress: ip,
        payload: encodeForm({ _csrf: pending.csrf, response, next: '/console/keys' }),
      });

    const auditOf = (adminId: string, action: string) =>
      h.services.database.db.selectFrom('audit_events').selectAll().where('target', '=', adminId).where('action', '=', action).execute();

    it('an admin registers a named passkey on the security page; sign-in then asks for it, and it opens the console with a new session', async () => {
      const a = await signedInAdmin(h, ws);
      const key = authenticator();
      const unnamed = await a.post('/console/security/passkeys', { name: '  ', response: '' });
      assert.equal(unnamed.status, 400);
      assert.match(unnamed.body, /Give the passkey a name/);
      const noScript = await a.post('/console/security/passkeys', { name: 'Work laptop', response: '' });
      assert.equal(noScript.status, 400);
      assert.match(noScript.body, /needs JavaScript/);
      const added = await register(a, key);
      assert.equal(added.status, 201, added.body);
      assert.match(added.body, /Passkey “Work laptop” added/);
      assert.match(added.body, /shown only once/, 'a first factor comes with recovery codes');
      assert.match(added.body, /<strong>Work laptop<\/strong>: added/);
      const row = await h.services.database.db
        .selectFrom('admin_passkeys')
        .selectAll()
        .where('admin_id', '=', a.adminId)
        .executeTakeFirstOrThrow();
      assert.equal(row.credential_id, key.id);
      assert.equal(row.transports, 'internal');

      const pending = await passwordStep(a.email, '10.40.0.1');
      assert.equal((await h.app.inject({ method: 'GET', url: '/console/keys', headers: { cookie: pending.cookie } })).statusCode, 303);
      const o = await signInOptions(pending, '10.40.0.1');
      assert.deepEqual(
        o.allowCredentials?.map((c) => c.id),
        [key.id],
      );
      const r = await giveAnswer(pending, key.assert(o), '10.40.0.1');
      assert.equal(r.statusCode, 303, r.body);
      assert.equal(r.headers.location, '/console/keys');
      const full = sessionCookieOf(r.headers) as string;
      assert.ok(full && full !== pending.cookie, 'a new session after the second factor');
      assert.equal((await h.app.inject({ method: 'GET', url: '/console/keys', headers: { cookie: full } })).statusCode, 200);
      const used = await h.services.database.db
        .selectFrom('admin_passkeys')
        .selectAll()
        .where('credential_id', '=', key.id)
        .executeTakeFirstOrThrow();
      assert.equal(used.counter, 1, 'the signature counter is stored');
      assert.ok(used.last_used_at);
      assert.equal((await auditOf(a.adminId, 'admin.passkey_added')).length, 1);
      assert.equal((await auditOf(a.adminId, 'admin.passkey_used')).length, 1);
      const trail = await h.app.inject({ method: 'GET', url: '/console/audit', headers: { cookie: full } });
      assert.match(trail.body, /Added a passkey \(Work laptop\) as a second factor of admin/);
      assert.match(trail.body, /signed in with a passkey \(Work laptop\)/);
    });

    it('the same authenticator registered twice at once (two tabs, a retried request) is added once: the other is told it is registered already', async () => {
      const a = await signedInAdmin(h, ws);
      const key = authenticator();
      const answers = await Promise.all([register(a, key, 'Tab one'), register(a, key, 'Tab two')]);
      assert.deepEqual(answers.map((r) => r.status).sort(), [201, 409], answers.map((r) => r.body.slice(0, 200)).join('\n'));
      assert.match(answers.find((r) => r.status === 409)?.body ?? '', /registered already/);
      const rows = await h.services.database.db.selectFrom('admin_passkeys').select('name').where('admin_id', '=', a.adminId).execute();
      assert.equal(rows.length, 1);
      assert.equal((await auditOf(a.adminId, 'admin.passkey_added')).length, 1);
    });

    it('a registration answer made for another origin is refused, and its challenge cannot be used again', async () => {
      const a = await signedInAdmin(h, ws);
      const key = authenticator();
      const o = await options('/console/security/passkeys/options', a.cookie, a.csrf);
      const wrong = await a.post('/console/security/passkeys', {
        name: 'Phished',
        response: key.register(o, { origin: 'https://wsops-console.example.net' }),
      });
      assert.equal(wrong.status, 400);
      assert.match(
        wrong.body,
        /made for another site \(https:\/\/wsops-console\.example\.net\), not for this console \(http:\/\/localhost:8080\)/,
      );
      const again = await a.post('/console/security/passkeys', { name: 'Phished', response: key.register(o) });
      assert.equal(again.status, 400);
      assert.match(again.body, /already used, or was not asked for on this page/);
      const rows = await h.services.database.db.selectFrom('admin_passkeys').select('name').where('admin_id', '=', a.adminId).execute();
      assert.deepEqual(rows, []);
    });

    it('a replayed passkey answer is refused: each challenge is used once and belongs to one sign-in', async () => {
      const a = await signedInAdmin(h, ws);
      const key = authenticator();
      assert.equal((await register(a, key)).status, 201);
      const first = await passwordStep(a.email, '10.41.0.1');
      const answer = key.assert(await signInOptions(first, '10.41.0.1'));
      assert.equal((await giveAnswer(first, answer, '10.41.0.1')).statusCode, 303);
      const second = await passwordStep(a.email, '10.41.0.1');
      await signInOptions(second, '10.41.0.1');
      const replay = await giveAnswer(second, answer, '10.41.0.1');
      assert.equal(replay.statusCode, 401);
      assert.match(replay.body, /already used, or was not asked for on this page/);
      assert.equal(sessionCookieOf(replay.headers), undefined, 'nobody is signed in');
      assert.equal((await auditOf(a.adminId, 'admin.passkey_used')).length, 1);
    });

    it('a passkey answer after the challenge expired (5 minutes) is refused', async () => {
      const a = await signedInAdmin(h, ws);
      const key = authenticator();
      assert.equal((await register(a, key)).status, 201);
      const pending = await passwordStep(a.email, '10.42.0.1');
      const o = await signInOptions(pending, '10.42.0.1');
      h.clock.advance(5 * 60_000 + 1_000);
      const late = await giveAnswer(pending, key.assert(o), '10.42.0.1');
      assert.equal(late.statusCode, 401);
      assert.match(late.body, /open for more than 5 minutes and expired/);
      const fresh = await giveAnswer(pending, key.assert(await signInOptions(pending, '10.42.0.1')), '10.42.0.1');
      assert.equal(fresh.statusCode, 303, 'a new prompt works');
    });

    it('a sign-in answer made for another origin is refused with the reason', async () => {
      const a = await signedInAdmin(h, ws);
      const key = authenticator();
      assert.equal((await register(a, key)).status, 201);
      const pending = await passwordStep(a.email, '10.43.0.1');
      const o = await signInOptions(pending, '10.43.0.1');
      const r = await giveAnswer(pending, key.assert(o, { origin: 'https://login-wsops.example.org' }), '10.43.0.1');
      assert.equal(r.statusCode, 401);
      assert.match(r.body, /made for another site \(https:\/\/login-wsops\.example\.org\)/);
      assert.match(r.body, /only use your passkey at http:\/\/localhost:8080/);
      assert.equal(sessionCookieOf(r.headers), undefined);
    });

    it('a passkey that is not one of the admin’s is refused (unknown credential), even one registered by another admin', async () => {
      const a = await signedInAdmin(h, ws);
      const other = await signedInAdmin(h, ws);
      assert.equal((await register(a, authenticator())).status, 201);
      const theirs = authenticator();
      assert.equal((await register(other, theirs)).status, 201);
      const pending = await passwordStep(a.email, '10.44.0.1');
      const r1 = await giveAnswer(pending, authenticator().assert(await signInOptions(pending, '10.44.0.1')), '10.44.0.1');
      assert.equal(r1.statusCode, 401);
      assert.match(r1.body, /not one of yours here/);
      const r2 = await giveAnswer(pending, theirs.assert(await signInOptions(pending, '10.44.0.1')), '10.44.0.1');
      assert.equal(r2.statusCode, 401);
      assert.match(r2.body, /not one of yours here/);
    });

    it('a signature counter that does not move forward (a cloned authenticator) is refused, and the stored counter stays', async () => {
      const a = await signedInAdmin(h, ws);
      const key = authenticator();
      assert.equal((await register(a, key)).status, 201);
      const clone = key.clone();
      for (let i = 0; i < 3; i++) {
        const p = await passwordStep(a.email, '10.45.0.1');
        assert.equal((await giveAnswer(p, key.assert(await signInOptions(p, '10.45.0.1')), '10.45.0.1')).statusCode, 303);
      }
      const pending = await passwordStep(a.email, '10.45.0.1');
      const r = await giveAnswer(pending, clone.assert(await signInOptions(pending, '10.45.0.1'), { counter: 2 }), '10.45.0.1');
      assert.equal(r.statusCode, 401);
      assert.match(r.body, /signature counter of 2, not above the 3 it reached before: it may have been copied \(a cloned authenticator\)/);
      const row = await h.services.database.db
        .selectFrom('admin_passkeys')
        .select('counter')
        .where('credential_id', '=', key.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.counter, 3);
      const next = await giveAnswer(pending, key.assert(await signInOptions(pending, '10.45.0.1')), '10.45.0.1');
      assert.equal(next.statusCode, 303, 'the real authenticator, one ahead, still works');
    });

    it('refused passkey answers are throttled like wrong codes: after 5 from one address a right answer waits too', async () => {
      const a = await signedInAdmin(h, ws);
      const key = authenticator();
      assert.equal((await register(a, key)).status, 201);
      const pending = await passwordStep(a.email, '10.46.0.1');
      const stranger = authenticator();
      for (let i = 0; i < 5; i++) {
        const r = await giveAnswer(pending, stranger.assert(await signInOptions(pending, '10.46.0.1')), '10.46.0.1');
        assert.equal(r.statusCode, 401);
      }
      const blocked = await giveAnswer(pending, key.assert(await signInOptions(pending, '10.46.0.1')), '10.46.0.1');
      assert.equal(blocked.statusCode, 429);
      assert.match(blocked.body, /sign-in is paused/);
      assert.ok(Number(blocked.headers['retry-after']) > 0);
    });

    it('refused passkey answers from many addresses hold those addresses, not the owner: their passkey works from an address they signed in from', async () => {
      const a = await signedInAdmin(h, ws);
      const key = authenticator();
      assert.equal((await register(a, key)).status, 201);
      const usual = '10.47.0.1';
      const first = await passwordStep(a.email, usual);
      assert.equal((await giveAnswer(first, key.assert(await signInOptions(first, usual)), usual)).statusCode, 303);
      const stranger = authenticator();
      const statuses: number[] = [];
      for (let i = 1; i <= 11; i++) {
        const ip = `10.48.0.${i}`;
        const pending = await passwordStep(a.email, ip);
        for (let j = 0; j < 5; j++)
          statuses.push((await giveAnswer(pending, stranger.assert(await signInOptions(pending, ip)), ip)).statusCode);
      }
      assert.equal(statuses.filter((s) => s === 401).length, 50, 'the admin-wide budget is spent');
      const fresh = await passwordStep(a.email, '10.48.0.99');
      assert.equal((await giveAnswer(fresh, key.assert(await signInOptions(fresh, '10.48.0.99')), '10.48.0.99')).statusCode, 429);
      const owner = await passwordStep(a.email, usual);
      const r = await giveAnswer(owner, key.assert(await signInOptions(owner, usual)), usual);
      assert.equal(r.statusCode, 303, r.body);
      assert.equal(r.headers.location, '/console/keys');
    });

    it('removing a passkey needs a second factor now (a passkey or a code); the last one cannot go while the workspace requires one', async () => {
      const w = await h.workspace({ seed: false });
      const a = await signedInAdmin(h, w);
      const key = authenticator();
      const added = await register(a, key, 'Desk key');
      const codes = [...added.body.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1] as string);
      assert.equal(codes.length, 10);
      assert.equal((await a.post('/console/security/require', { required: 'yes' })).status, 200, 'a passkey counts for the rule');
      const path = `/console/security/passkeys/${key.id}/remove`;
      const page = await a.get(path);
      assert.equal(page.status, 200);
      assert.match(page.body, /Remove “Desk key”\?/);
      const only = await a.post(path, { code: codes[0] as string });
      assert.equal(only.status, 409);
      assert.match(only.body, /this passkey is your only one/);

      const second = authenticator();
      assert.equal((await register(a, second, 'Phone')).status, 201);
      const wrong = await a.post(path, { code: 'aaaaa-aaaaa' });
      assert.equal(wrong.status, 400);
      assert.match(wrong.body, /That code is not right/);
      const byPasskey = await options(`${path}/options`, a.cookie, a.csrf);
      const foreign = await a.post(path, { response: authenticator().assert(byPasskey) });
      assert.equal(foreign.status, 400);
      assert.match(foreign.body, /not one of yours here/);
      const confirmed = await a.post(path, { response: second.assert(await options(`${path}/options`, a.cookie, a.csrf)) });
      assert.equal(confirmed.status, 200, confirmed.body);
      assert.match(confirmed.body, /Passkey “Desk key” removed/);
      assert.equal((await a.get(path)).status, 404);
      const removed = await auditOf(a.adminId, 'admin.passkey_removed');
      assert.equal(removed.length, 1);
      assert.match(removed[0]?.detail ?? '', /Desk key/);

      const other = authenticator();
      assert.equal((await register(a, other, 'Spare')).status, 201);
      const byCode = await a.post(`/console/security/passkeys/${other.id}/remove`, { code: codes[1] as string });
      assert.equal(byCode.status, 200, 'a recovery code confirms too');
    });

    it('a workspace that requires a second factor lets an admin in once they have added a passkey', async () => {
      const w = await h.workspace({ seed: false });
      const owner = await signedInAdmin(h, w);
      const newcomer = await signedInAdmin(h, w);
      assert.equal((await register(owner, authenticator())).status, 201);
      assert.equal((await owner.post('/console/security/require', { required: 'yes' })).status, 200);
      assert.equal((await newcomer.get('/console/keys')).location, '/console/security?enrol=required');
      assert.equal((await register(newcomer, authenticator(), 'Laptop')).status, 201, 'the security page stays open to enrol');
      assert.equal((await newcomer.get('/console/keys')).status, 200);
    });
  });
}
