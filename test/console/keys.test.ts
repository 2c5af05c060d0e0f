/** The API keys page: create (shown once), list, revoke with confirmation; workspace isolation. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SignedInAdmin, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const KEY_RE = /svc_sk_(live|test)_([0-9A-Za-z]{16})_[0-9A-Za-z]{43}/g;
const KEY_ONE = new RegExp(KEY_RE.source);

for (const dialect of DIALECTS) {
  describe(`console API keys [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let otherWs: string;
    let admin: SignedInAdmin;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_MAX_KEYS: '20' });
      ws = await h.workspace();
      otherWs = await h.workspace({ seed: false });
      admin = await signedInAdmin(h, ws);
    });
    after(() => h.close());

    const create = (form: Record<string, string | readonly string[]>) =>
      admin.post('/console/keys', { name: 'Intranet sync', scopes: ['assets:read'], environment: 'test', days: '90', ...form });

    it('a created key is shown once with a copy button and a warning, works on the API, and later pages show only its key_id', async () => {
      const res = await create({ scopes: ['assets:read', 'people:read'] });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const m = KEY_ONE.exec(res.body);
      assert.ok(m, 'the full key is on the page');
      assert.match(res.body, /you won’t see it again/);
      assert.match(res.body, /data-copy="new-key-value"/);
      const api = await h.get('/api/v1/assets?limit=1', m[0]);
      assert.equal(api.status, 200);
      const list = await admin.get('/console/keys');
      assert.ok(!KEY_ONE.test(list.body), 'the list never shows a full key');
      assert.ok(list.body.includes(m[2] as string), 'the list shows the key_id');
      assert.ok(list.body.includes(admin.email), 'created by the signed-in admin');
    });

    it('the list says which keys are valid, expired and revoked, and "N of 20 keys" counts only valid ones', async () => {
      const fresh = await createHarness(dialect, { WSOPS_MAX_KEYS: '20' });
      try {
        const w = await fresh.workspace({ seed: false });
        await fresh.key(w, ['assets:read'], { days: 1 });
        const revoked = await fresh.key(w, ['assets:read']);
        await fresh.key(w, ['assets:read']);
        fresh.clock.advance(2 * 86_400_000);
        const a = await signedInAdmin(fresh, w);
        await a.post(`/console/keys/${revoked.keyId}/revoke`);
        const page = await a.get('/console/keys');
        assert.match(page.body, /1 of 20 keys/);
        assert.match(page.body, />Valid</);
        assert.match(page.body, />Expired</);
        assert.match(page.body, />Revoked</);
      } finally {
        await fresh.close();
      }
    });

    it('revoking asks for confirmation first (GET changes nothing), then the key gets 401 and the list says revoked', async () => {
      const k = await h.key(ws, ['assets:read']);
      const confirm = await admin.get(`/console/keys/${k.keyId}/revoke`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.body, /cannot be undone/);
      assert.equal((await h.get('/api/v1/assets?limit=1', k.key)).status, 200, 'showing the confirmation revokes nothing');
      const done = await admin.post(`/console/keys/${k.keyId}/revoke`);
      assert.equal(done.status, 303);
      assert.equal((await h.get('/api/v1/assets?limit=1', k.key)).status, 401);
      const list = await admin.get(done.location);
      assert.match(list.body, new RegExp(`Key ${k.keyId} revoked`));
    });

    it("another workspace's key id gets a 404 page and the key keeps working", async () => {
      const theirs = await h.key(otherWs, ['people:read']);
      const page = await admin.get(`/console/keys/${theirs.keyId}/revoke`);
      assert.equal(page.status, 404);
      assert.match(page.headers['content-type'] as string, /text\/html/);
      const post = await admin.post(`/console/keys/${theirs.keyId}/revoke`);
      assert.equal(post.status, 404);
      assert.equal((await h.get('/api/v1/people?limit=1', theirs.key)).status, 200);
    });

    it('markup in a key name is shown as text, never as markup', async () => {
      const res = await create({ name: '<script>alert(1)</script><b>x</b>' });
      assert.equal(res.status, 201);
      const list = await admin.get('/console/keys');
      assert.ok(!list.body.includes('<script>alert(1)'), 'no live script tag');
      assert.ok(list.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;'));
    });

    for (const [label, form, field, pattern] of [
      ['no scope', { scopes: [] }, 'scopes', /Choose at least one scope/],
      ['unknown scope', { scopes: ['assets:write'] }, 'scopes', /unknown scope &quot;assets:write&quot;/],
      ['life over a year', { days: '366' }, 'days', /1 to 365/],
      ['life not a number', { days: 'soon' }, 'days', /whole number of days/],
      ['empty name', { name: '  ' }, 'name', /1 to 100 characters/],
      ['bad environment', { environment: 'prod' }, 'environment', /Choose live or test/],
    ] as const) {
      it(`a refused key form keeps what was typed, names the rule next to the field and creates nothing: ${label}`, async () => {
        const before = (await admin.get('/console/keys')).body.match(/(\d+) of 20 keys/)?.[1];
        const res = await create({ ...form, name: 'name' in form ? form.name : 'Kept name' });
        assert.equal(res.status, 400);
        assert.match(res.body, pattern);
        if (field !== 'name') assert.match(res.body, /value="Kept name"/, 'typed values are kept');
        if (field === 'scopes' || field === 'days' || field === 'name') assert.match(res.body, new RegExp(`id="f-${field}-error"`));
        assert.ok(!KEY_ONE.test(res.body));
        assert.equal((await admin.get('/console/keys')).body.match(/(\d+) of 20 keys/)?.[1], before);
      });
    }

    it('the plan limit refuses a key past it, saying what to do', async () => {
      const fresh = await createHarness(dialect, { WSOPS_MAX_KEYS: '1' });
      try {
        const w = await fresh.workspace({ seed: false });
        const a = await signedInAdmin(fresh, w);
        await fresh.key(w, ['assets:read']);
        const res = await a.post('/console/keys', { name: 'x', scopes: ['assets:read'], environment: 'test', days: '90' });
        assert.equal(res.status, 400);
        assert.match(res.body, /allows 1 valid keys/);
        assert.match(res.body, /1 of 1 keys/);
      } finally {
        await fresh.close();
      }
    });

    it('a key can be limited to IP ranges at creation; a malformed range is refused next to the field', async () => {
      const bad = await create({ allowed_ips: '203.0.113.0/24, 10.0.0.0/33' });
      assert.equal(bad.status, 400);
      assert.match(bad.body, /id="f-allowed_ips-error"/);
      assert.match(bad.body, /&quot;10\.0\.0\.0\/33&quot; is not a CIDR range/);
      assert.match(bad.body, /value="203\.0\.113\.0\/24, 10\.0\.0\.0\/33"/, 'what was typed is kept');
      const res = await create({ name: 'Limited', allowed_ips: '203.0.113.0/24 2001:db8::/32' });
      assert.equal(res.status, 201, res.body);
      const key = KEY_ONE.exec(res.body)?.[0] as string;
      const from = (remoteAddress: string) =>
        h.app.inject({ method: 'GET', url: '/api/v1/assets?limit=1', remoteAddress, headers: { authorization: `Bearer ${key}` } });
      assert.equal((await from('203.0.113.50')).statusCode, 200);
      assert.equal((await from('198.51.100.50')).statusCode, 403);
      const list = await admin.get('/console/keys');
      assert.match(list.body, /<code class="chip">203\.0\.113\.0\/24<\/code>/);
    });

    it('the IP allowlist of a key can be changed; the change applies from the next request', async () => {
      const k = await h.key(ws, ['assets:read']);
      const form = await admin.get(`/console/keys/${k.keyId}/allowlist`);
      assert.equal(form.status, 200);
      const refused = await admin.post(`/console/keys/${k.keyId}/allowlist`, { allowed_ips: 'not-an-ip' });
      assert.equal(refused.status, 400);
      assert.match(refused.body, /is not a CIDR range/);
      const saved = await admin.post(`/console/keys/${k.keyId}/allowlist`, { allowed_ips: '10.0.0.0/8' });
      assert.equal(saved.status, 303);
      assert.match((await admin.get(saved.location)).body, new RegExp(`IP allowlist of key ${k.keyId} saved`));
      const from = (remoteAddress: string) =>
        h.app.inject({ method: 'GET', url: '/api/v1/assets?limit=1', remoteAddress, headers: { authorization: `Bearer ${k.key}` } });
      assert.deepEqual([(await from('10.1.1.1')).statusCode, (await from('192.0.2.1')).statusCode], [200, 403]);
      await admin.post(`/console/keys/${k.keyId}/allowlist`, { allowed_ips: '' });
      assert.equal((await from('192.0.2.1')).statusCode, 200, 'emptied: any address');
    });

    it('roll: the chosen grace, the successor shown once, both keys valid meanwhile, then only the successor', async () => {
      const k = await h.key(ws, ['assets:read']);
      const page = await admin.get(`/console/keys/${k.keyId}/roll`);
      assert.equal(page.status, 200);
      for (const g of ['0', '1h', '24h', '7d']) assert.match(page.body, new RegExp(`name="grace" value="${g}"`));
      assert.equal((await h.get('/api/v1/assets?limit=1', k.key)).status, 200, 'showing the form changes nothing');
      const bad = await admin.post(`/console/keys/${k.keyId}/roll`, { grace: '2d' });
      assert.equal(bad.status, 400);
      assert.match(bad.body, /grace must be one of/);
      const res = await admin.post(`/console/keys/${k.keyId}/roll`, { grace: '1h' });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const successor = KEY_ONE.exec(res.body)?.[0] as string;
      assert.ok(successor && !successor.includes(k.keyId));
      assert.match(res.body, new RegExp(`Key ${k.keyId} rolled`));
      assert.deepEqual([(await h.get('/api/v1/scopes', k.key)).status, (await h.get('/api/v1/scopes', successor)).status], [200, 200]);
      const list = await admin.get('/console/keys');
      assert.match(list.body, />Rolled</);
      assert.ok(!list.body.includes(`href="/console/keys/${k.keyId}/roll"`), 'a rolled key offers no second roll');
      h.clock.advance(3_600_000);
      assert.deepEqual([(await h.get('/api/v1/scopes', k.key)).status, (await h.get('/api/v1/scopes', successor)).status], [401, 200]);
      h.clock.advance(-3_600_000);
    });

    it('last use shows when and from where; never-used keys and keys expiring within 14 days are marked, on the keys page and the overview', async () => {
      const fresh = await createHarness(dialect);
      try {
        const w = await fresh.workspace({ seed: false });
        const used = await fresh.key(w, ['assets:read']);
        await fresh.key(w, ['assets:read'], { days: 10 });
        await fresh.app.inject({
          method: 'GET',
          url: '/api/v1/scopes',
          remoteAddress: '203.0.113.77',
          headers: { authorization: `Bearer ${used.key}` },
        });
        await fresh.lastUsesWritten();
        const a = await signedInAdmin(fresh, w);
        const page = await a.get('/console/keys');
        assert.match(page.body, /from <code>203\.0\.113\.77<\/code>/);
        assert.match(page.body, />Never used</);
        assert.match(page.body, />Expires in 10 days</);
        assert.match(page.body, /1 key expires<\/strong>|1 key expires within 14 days/);
        const overview = await a.get('/console');
        assert.match(overview.body, /1 API key expires within 14 days/);
        fresh.clock.advance(31 * 86_400_000);
        const later = await signedInAdmin(fresh, w, { email: 'later@example.com' }); // the first session has expired
        assert.match((await later.get('/console/keys')).body, />Unused 30\+ days</);
      } finally {
        await fresh.close();
      }
    });
  });
}
