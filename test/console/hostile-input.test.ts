/**
 * Hostile text in the console: control characters in any form field or query value are refused
 * before any query with the same answer on both databases (PostgreSQL cannot store NUL), names
 * and emails refuse terminal escapes and bidi overrides, and the console answers only at
 * WSOPS_BASE_URL (its Host and the Origin of its forms).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listKeys } from '../../src/keys/keys.js';
import { listAdmins } from '../../src/sign-in/admins.js';
import { encodeForm, type SignedInAdmin, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const KEY_FORM = { scopes: ['assets:read'], environment: 'test', days: '30' };

for (const dialect of DIALECTS) {
  describe(`console hostile input [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let admin: SignedInAdmin;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace({ seed: false });
      admin = await signedInAdmin(h, ws);
    });
    after(() => h.close());

    const assertRefusedPage = (r: { status: number; headers: Record<string, unknown>; body: string }, pattern: RegExp) => {
      assert.equal(r.status, 400, r.body.slice(0, 300));
      assert.match(String(r.headers['content-type']), /^text\/html/, 'the console’s own page');
      assert.match(r.body, pattern);
      assert.match(r.body, /Nothing was changed/);
    };

    it('a NUL in the sign-in email is a 400 page naming the character, on both databases, before any query', async () => {
      for (const email of ['x\u0000@example.com', `${admin.email}\u0000`]) {
        const r = await h.app.inject({
          method: 'POST',
          url: '/console/sign-in',
          headers: FORM,
          remoteAddress: '10.77.0.1',
          payload: encodeForm({ email, password: 'whatever password' }),
        });
        assertRefusedPage(
          { status: r.statusCode, headers: r.headers, body: r.body },
          /form field &quot;email&quot; contains the control character U\+0000/,
        );
      }
    });

    it('a NUL or ESC in a key name, an admin email or the audit actor filter is a 400 page, and nothing is stored', async () => {
      const keysBefore = (await listKeys(h.services.database.db, ws, h.clock())).length;
      const adminsBefore = (await listAdmins(h.services.database.db, ws)).length;
      assertRefusedPage(await admin.post('/console/keys', { ...KEY_FORM, name: 'a\u0000b' }), /U\+0000/);
      assertRefusedPage(await admin.post('/console/keys', { ...KEY_FORM, name: 'esc\u001b[2J\u001b]0;pwned\u0007' }), /U\+001B/);
      assertRefusedPage(await admin.post('/console/admins', { email: 'new\u0000@example.com' }), /U\+0000/);
      assertRefusedPage(
        await admin.get('/console/audit?actor=a%00b'),
        /query value &quot;actor&quot; contains the control character U\+0000/,
      );
      assertRefusedPage(await admin.get('/console/keys?revoked=%1b'), /U\+001B/);
      assertRefusedPage(
        await admin.get('/console/webhooks/whe_a%00b'),
        /path segment &quot;id&quot; contains the control character U\+0000/,
      );
      assert.equal((await listKeys(h.services.database.db, ws, h.clock())).length, keysBefore);
      assert.equal((await listAdmins(h.services.database.db, ws)).length, adminsBefore);
    });

    it('a key name or admin email with a bidi override, isolate or line separator is refused beside its field', async () => {
      for (const name of ['invoice\u202efdp.exe', 'a\u2066b\u2069', 'line\u2028break']) {
        const r = await admin.post('/console/keys', { ...KEY_FORM, name });
        assert.equal(r.status, 400, r.body.slice(0, 200));
        assert.match(
          r.body,
          /id="f-name-error">the key name contains the character U\+20(2E|66|28) \(a control or text-direction character\)/,
        );
      }
      const r = await admin.post('/console/admins', { email: 'ann\u202e@example.com' });
      assert.equal(r.status, 400);
      assert.match(r.body, /the email address contains the character U\+202E/);
      assert.equal((await listKeys(h.services.database.db, ws, h.clock())).filter((k) => /[\u2028\u202e\u2066]/.test(k.name)).length, 0);
    });

    it('a tab in a query value is not refused, and ordinary non-ASCII names are kept', async () => {
      const r = await admin.post('/console/keys', { ...KEY_FORM, name: 'Überweisungen – 東京 – مرحبا' });
      assert.equal(r.status, 201, r.body.slice(0, 300));
      assert.ok((await listKeys(h.services.database.db, ws, h.clock())).some((k) => k.name === 'Überweisungen – 東京 – مرحبا'));
      const q = await admin.get('/console/audit?actor=a%09b');
      assert.notEqual(q.status, 400, 'a tab in a query value is not a control character the console refuses');
    });

    it('a Host outside WSOPS_BASE_URL is refused on console pages (421, the console’s page); its port is not compared', async () => {
      for (const host of ['evil.example', 'evil.example:8080', '127.0.0.1:8080']) {
        const r = await h.app.inject({ method: 'GET', url: '/console/sign-in', headers: { host } });
        assert.equal(r.statusCode, 421, host);
        assert.match(String(r.headers['content-type']), /^text\/html/);
        assert.match(r.body, /answers only at http:\/\/localhost:8080\/console/);
      }
      const post = await admin.post(
        '/console/keys',
        { ...KEY_FORM, name: 'rebound' },
        { host: 'evil.example:8080', origin: 'http://evil.example:8080' },
      );
      assert.equal(post.status, 421, 'a rebinding page posting with its own name in Host and Origin');
      assert.equal((await h.app.inject({ method: 'GET', url: '/console/sign-in', headers: { host: 'localhost:3000' } })).statusCode, 200);
      assert.equal(
        (await h.app.inject({ method: 'GET', url: '/healthz', headers: { host: 'evil.example' } })).statusCode,
        200,
        'only console routes',
      );
    });

    it('a form’s Origin must be WSOPS_BASE_URL’s origin, not whatever the request’s own Host says', async () => {
      const before = (await listKeys(h.services.database.db, ws, h.clock())).length;
      for (const origin of ['http://localhost:3000', 'https://localhost:8080', 'null']) {
        const r = await admin.post(
          '/console/keys',
          { ...KEY_FORM, name: 'origin probe' },
          { host: new URL(origin === 'null' ? 'http://localhost:3000' : origin).host, origin },
        );
        assert.equal(r.status, 403, origin);
      }
      assert.equal((await listKeys(h.services.database.db, ws, h.clock())).length, before);
      const same = await admin.post('/console/keys', { ...KEY_FORM, name: 'origin ok' }, { origin: 'http://localhost:8080' });
      assert.equal(same.status, 201);
    });
  });
}
