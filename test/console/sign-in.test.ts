/** Console sign-in: one-time links, passwords, throttling, sessions and their cookie. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAdminLink } from '../../src/sign-in/sign-in-links.js';
import { encodeForm, sessionCookieOf, signedInAdmin, TEST_PASSWORD } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const HOUR = 3_600_000;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

for (const dialect of DIALECTS) {
  describe(`console sign-in [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace({ seed: false });
    });
    after(() => h.close());

    let n = 0;
    const newLink = async (email = `person${++n}@example.com`) => {
      const l = await createAdminLink(h.services.database, { workspaceId: ws, email, actor: 'cli', now: h.clock() });
      return { ...l, path: `/console/link/${l.token}`, email };
    };
    const setPassword = (path: string, password = TEST_PASSWORD, confirm = password) =>
      h.app.inject({ method: 'POST', url: path, headers: FORM, payload: encodeForm({ password, confirm }) });
    const signIn = (email: string, password: string, options: { ip?: string; next?: string; cookie?: string } = {}) =>
      h.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        headers: { ...FORM, ...(options.cookie ? { cookie: options.cookie } : {}) },
        remoteAddress: options.ip ?? '127.0.0.1',
        payload: encodeForm({ email, password, next: options.next ?? '' }),
      });
    const page = (url: string, cookie?: string) => h.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });

    it('a sign-in link sets a password and signs in; it works only once', async () => {
      const link = await newLink();
      assert.equal((await page(link.path)).statusCode, 200);
      const first = await setPassword(link.path);
      assert.equal(first.statusCode, 303);
      assert.equal(first.headers.location, '/console');
      const cookie = sessionCookieOf(first.headers);
      assert.ok(cookie);
      assert.equal((await page('/console/keys', cookie)).statusCode, 200);
      const again = await setPassword(link.path, 'another password 123');
      assert.equal(again.statusCode, 410);
      assert.match(again.body, /already been used/);
      assert.equal(sessionCookieOf(again.headers), undefined);
      assert.match((await page(link.path)).body, /already been used/);
      const stillOld = await signIn(link.email, TEST_PASSWORD, { ip: '10.0.0.1' });
      assert.equal(stillOld.statusCode, 303, 'the reused link changed no password');
    });

    it('a link expires after 24 hours: refused with the reason, no password set', async () => {
      const link = await newLink();
      h.clock.advance(24 * HOUR);
      const get = await page(link.path);
      assert.equal(get.statusCode, 410);
      assert.match(get.body, /expired \(links are valid for 24 hours\)/);
      assert.equal((await setPassword(link.path)).statusCode, 410);
      assert.equal((await signIn(link.email, TEST_PASSWORD, { ip: '10.0.0.2' })).statusCode, 401);
    });

    it('a link just under 24 hours old still works', async () => {
      const link = await newLink();
      h.clock.advance(24 * HOUR - 1000);
      assert.equal((await setPassword(link.path)).statusCode, 303);
    });

    it('a new link for the same address (forgotten password) makes the earlier one unusable', async () => {
      const first = await newLink('forgot@example.com');
      const second = await newLink('forgot@example.com');
      assert.equal((await setPassword(first.path)).statusCode, 410);
      assert.equal((await setPassword(second.path)).statusCode, 303);
    });

    for (const [label, password, confirm, pattern] of [
      ['too short', 'short pw', 'short pw', /at least 12 characters/],
      ['not repeated the same', 'long enough password', 'long enough passw0rd', /not the same/],
    ] as const) {
      it(`a refused password keeps the link usable: ${label}`, async () => {
        const link = await newLink();
        const r = await setPassword(link.path, password, confirm);
        assert.equal(r.statusCode, 400);
        assert.match(r.body, pattern);
        assert.equal(sessionCookieOf(r.headers), undefined);
        assert.equal((await setPassword(link.path)).statusCode, 303);
      });
    }

    it('sign in with email and password goes to the page asked for; a wrong password or unknown email gets the same refusal', async () => {
      const link = await newLink('Mixed.Case@example.com');
      await setPassword(link.path);
      const ok = await signIn('  MIXED.case@example.com ', TEST_PASSWORD, { ip: '10.0.1.1', next: '/console/keys?x=1' });
      assert.equal(ok.statusCode, 303);
      assert.equal(ok.headers.location, '/console/keys?x=1');
      const wrong = await signIn('mixed.case@example.com', 'not the password', { ip: '10.0.1.1' });
      const unknown = await signIn('nobody@example.com', 'not the password', { ip: '10.0.1.1' });
      assert.equal(wrong.statusCode, 401);
      assert.equal(unknown.statusCode, 401);
      assert.match(wrong.body, /do not match/);
      assert.equal(
        wrong.body.replace(/value="[^"]*"/g, ''),
        unknown.body.replace(/value="[^"]*"/g, ''),
        'no hint whether the address exists',
      );
    });

    for (const [next, location] of [
      ['/console/中', '/console/%E4%B8%AD'],
      ['/console/keys?q=café', '/console/keys?q=caf%C3%A9'],
      ['/console/a b', '/console/a%20b'],
    ] as const) {
      it(`a next path with characters a Location cannot carry is percent-encoded, and sign-in works: ${next}`, async () => {
        const a = await signedInAdmin(h, ws);
        const form = await page(`/console/sign-in?next=${encodeURIComponent(next)}`);
        assert.equal(form.statusCode, 200);
        assert.match(form.body, new RegExp(`name="next" value="${location.replace(/[?]/g, '\\?')}"`));
        const r = await signIn(a.email, a.password, { ip: '10.0.2.2', next });
        assert.equal(r.statusCode, 303, r.body);
        assert.equal(r.headers.location, location);
        assert.ok(sessionCookieOf(r.headers), 'signed in');
      });
    }

    for (const next of ['//evil.example/x', 'https://evil.example/', '/api/v1/assets', '/console\\@evil', '/consolex']) {
      it(`only console paths are returned to after sign-in (no open redirect): ${next}`, async () => {
        const a = await signedInAdmin(h, ws);
        const r = await signIn(a.email, a.password, { ip: '10.0.2.1', next });
        assert.equal(r.statusCode, 303);
        assert.equal(r.headers.location, '/console');
      });
    }

    it('wrong passwords are throttled per address: after 20 from one address, any account waits from there', async () => {
      for (let i = 0; i < 20; i++)
        assert.equal((await signIn(`guess${i}@example.com`, 'wrong password', { ip: '10.2.0.1' })).statusCode, 401);
      const a = await signedInAdmin(h, ws);
      const blocked = await signIn(a.email, a.password, { ip: '10.2.0.1' });
      assert.equal(blocked.statusCode, 429);
      assert.match(blocked.body, /Too many wrong passwords/);
      assert.equal((await signIn(a.email, a.password, { ip: '10.2.0.2' })).statusCode, 303, 'another address is not affected');
    });

    it('right passwords do not count toward the throttle', async () => {
      const a = await signedInAdmin(h, ws);
      for (let i = 0; i < 8; i++) assert.equal((await signIn(a.email, a.password, { ip: '10.3.0.1' })).statusCode, 303);
    });

    it('every sign-in gets a new session id, whatever cookie was sent (no fixation); sign-out ends only that session', async () => {
      const a = await signedInAdmin(h, ws);
      const r1 = await signIn(a.email, a.password, { ip: '10.4.0.1', cookie: a.cookie });
      const c1 = sessionCookieOf(r1.headers);
      assert.ok(c1);
      assert.notEqual(c1, a.cookie);
      const r2 = await signIn(a.email, a.password, { ip: '10.4.0.1', cookie: 'wsops_console=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
      const c2 = sessionCookieOf(r2.headers);
      assert.ok(c2 && c2 !== c1 && !c2.endsWith('AAAAAAA'));
      const out = await a.post('/console/sign-out');
      assert.equal(out.status, 303);
      assert.match(String(out.headers['set-cookie']), /wsops_console=;/);
      assert.equal((await a.get('/console/keys')).status, 303, 'signed out');
      assert.equal((await page('/console/keys', c1)).statusCode, 200, 'the other session stays');
    });

    it('a session ends after 12 hours idle; activity keeps it; it ends after 7 days whatever', async () => {
      const idle = await signedInAdmin(h, ws);
      const busy = await signedInAdmin(h, ws);
      h.clock.advance(11 * HOUR);
      assert.equal((await busy.get('/console/keys')).status, 200);
      h.clock.advance(HOUR);
      const gone = await idle.get('/console/keys');
      assert.equal(gone.status, 303);
      assert.equal(gone.location, '/console/sign-in?next=%2Fconsole%2Fkeys');
      for (let elapsed = 12; elapsed < 7 * 24 - 11; elapsed += 11) {
        assert.equal((await busy.get('/console/keys')).status, 200, `active at ${elapsed} h`);
        h.clock.advance(11 * HOUR);
      }
      h.clock.advance(12 * HOUR - 1);
      assert.equal((await busy.get('/console/keys')).status, 303, 'absolute limit of 7 days');
    });

    it('the session cookie is HttpOnly, SameSite=Lax, Path=/console, and not Secure over http', async () => {
      const link = await newLink();
      const r = await setPassword(link.path);
      const line = String([r.headers['set-cookie']].flat().find((c) => String(c).startsWith('wsops_console=')));
      assert.match(line, /; HttpOnly/);
      assert.match(line, /; SameSite=Lax/);
      assert.match(line, /; Path=\/console(;|$)/);
      assert.doesNotMatch(line, /Secure/);
    });

    it('the session cookie is Secure, and HSTS is sent, when the base URL is https', async () => {
      const secure = await createHarness(dialect, { WSOPS_BASE_URL: 'https://ops.example.com' });
      try {
        const w = await secure.workspace({ seed: false });
        const l = await createAdminLink(secure.services.database, {
          workspaceId: w,
          email: 's@example.com',
          actor: 'cli',
          now: secure.clock(),
        });
        const r = await secure.app.inject({
          method: 'POST',
          url: `/console/link/${l.token}`,
          headers: { ...FORM, host: 'ops.example.com' },
          payload: encodeForm({ password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
        });
        assert.match(String(r.headers['set-cookie']), /; Secure/);
        assert.match(String(r.headers['strict-transport-security']), /max-age=\d+/);
        const plain = await h.app.inject({ method: 'GET', url: '/console/sign-in' });
        assert.equal(plain.headers['strict-transport-security'], undefined, 'no HSTS over http');
      } finally {
        await secure.close();
      }
    });

    it('a page asked for without a session redirects to sign-in and returns there afterwards', async () => {
      const r = await page('/console/modules?x=1');
      assert.equal(r.statusCode, 303);
      assert.equal(r.headers.location, '/console/sign-in?next=%2Fconsole%2Fmodules%3Fx%3D1');
      const form = await page(r.headers.location as string);
      assert.match(form.body, /name="next" value="\/console\/modules\?x=1"/);
    });
  });
}
