/** The console's security boundary: CSRF, origins, headers, the cookie/API-key separation, assets. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listKeys } from '../../src/keys/keys.js';
import { type SignedInAdmin, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

for (const dialect of DIALECTS) {
  describe(`console security [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let admin: SignedInAdmin;
    const keyForm = { name: 'CSRF probe', scopes: ['assets:read'], environment: 'test', days: '30' };
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace({ seed: false });
      admin = await signedInAdmin(h, ws);
    });
    after(() => h.close());
    const keyCount = async () => (await listKeys(h.services.database.db, ws, h.clock())).length;

    for (const [label, csrf] of [
      ['missing', ''],
      ['tampered', 'X'.repeat(43)],
      ['another session’s', undefined],
    ] as const) {
      it(`a POST with a ${label} CSRF token is refused (403 page) and changes nothing`, async () => {
        const token = csrf ?? (await signedInAdmin(h, ws)).csrf;
        const before = await keyCount();
        const r = await admin.post('/console/keys', { ...keyForm, _csrf: token });
        assert.equal(r.status, 403);
        assert.match(r.headers['content-type'] as string, /text\/html/);
        assert.match(r.body, /Nothing was changed/);
        assert.equal(await keyCount(), before);
      });
    }

    it('a form posted from another site (Origin header) is refused, even with the right token', async () => {
      const before = await keyCount();
      const r = await admin.post('/console/keys', keyForm, { origin: 'https://evil.example' });
      assert.equal(r.status, 403);
      assert.equal(await keyCount(), before);
      const same = await admin.post('/console/keys', keyForm, { origin: 'http://localhost:8080' });
      assert.equal(same.status, 201, 'the console’s own origin is accepted');
    });

    it('an API key in Authorization does not open the console', async () => {
      const { key } = await h.key(ws);
      const r = await h.app.inject({ method: 'GET', url: '/console/keys', headers: { authorization: `Bearer ${key}` } });
      assert.equal(r.statusCode, 303);
      assert.match(String(r.headers.location), /^\/console\/sign-in/);
      const post = await h.app.inject({
        method: 'POST',
        url: '/console/keys',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'name=x&scopes=assets:read&environment=test&days=30',
      });
      assert.equal(post.statusCode, 303);
    });

    it('the console session cookie does not open /api/v1 (401)', async () => {
      const r = await h.get('/api/v1/assets?limit=1', undefined, { cookie: admin.cookie });
      assert.equal(r.status, 401);
    });

    it('pages send a CSP without unsafe-inline scripts, frame-ancestors none, a Referrer-Policy, and no framing', async () => {
      for (const url of ['/console/keys', '/console/modules', '/console/admins']) {
        const r = await admin.get(url);
        const csp = String(r.headers['content-security-policy']);
        assert.match(csp, /script-src 'self'(;|$)/, url);
        assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
        assert.match(csp, /frame-ancestors 'none'/);
        assert.match(csp, /default-src 'self'/);
        assert.match(String(r.headers['referrer-policy']), /^(same-origin|no-referrer)$/);
        assert.equal(r.headers['x-frame-options'], 'DENY');
        assert.equal(r.headers['cache-control'], 'no-store');
      }
      const signIn = await h.app.inject({ method: 'GET', url: '/console/sign-in' });
      assert.match(String(signIn.headers['content-security-policy']), /frame-ancestors 'none'/);
    });

    it('pages carry no inline script, inline style or inline event handler (the CSP would block them)', async () => {
      for (const url of ['/console/keys', '/console/modules', '/console/admins']) {
        const body = (await admin.get(url)).body;
        assert.doesNotMatch(body, /<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")[^>]*>/, url);
        assert.doesNotMatch(body, /\sstyle=/, url);
        assert.doesNotMatch(body, /\son[a-z]+=/, url);
      }
    });

    it('an unknown console page is an HTML 404 page, not problem+json', async () => {
      const r = await admin.get('/console/nothing-here');
      assert.equal(r.status, 404);
      assert.match(r.headers['content-type'] as string, /text\/html/);
      assert.match(r.body, /Page not found/);
    });

    it('assets are served from a fixed list with content types, an ETag (304 when unchanged) and a long cache on versioned URLs', async () => {
      const css = await h.app.inject({ method: 'GET', url: '/console/assets/console.css' });
      assert.equal(css.statusCode, 200);
      assert.match(String(css.headers['content-type']), /^text\/css/);
      const etag = String(css.headers.etag);
      const again = await h.app.inject({ method: 'GET', url: '/console/assets/console.css', headers: { 'if-none-match': etag } });
      assert.equal(again.statusCode, 304);
      const js = await h.app.inject({ method: 'GET', url: '/console/assets/uPlot.iife.min.js' });
      assert.match(String(js.headers['content-type']), /^text\/javascript/);
      const page = (await admin.get('/console/keys')).body;
      const versioned = /href="(\/console\/assets\/console\.css\?v=[^"]+)"/.exec(page)?.[1];
      assert.ok(versioned);
      const long = await h.app.inject({ method: 'GET', url: versioned });
      assert.match(String(long.headers['cache-control']), /max-age=31536000, immutable/);
    });

    for (const url of [
      '/console/assets/..%2F..%2Fpackage.json',
      '/console/assets/%2e%2e%2fsession.ts',
      '/console/assets/uPlot.cjs.js',
      '/console/assets/',
    ]) {
      it(`no file outside the asset list is served: ${url}`, async () => {
        const r = await h.app.inject({ method: 'GET', url });
        assert.equal(r.statusCode, 404);
        assert.doesNotMatch(r.body, /"dependencies"|import /);
      });
    }
  });
}
