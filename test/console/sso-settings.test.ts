/**
 * Setting up the workspace's single sign-on from the console's security page: the same rules as
 * `wsops sso set` (a refusal next to the field it concerns, nothing stored), a client secret
 * stored sealed and never shown back, password sign-in switched off, removal, the audit trail.
 * (Signing in through a real provider after setting it up here: sso.test.ts, in Chromium.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeForm, signedInAdmin, TEST_PASSWORD } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const SECRET = 'client-secret-that-must-never-be-shown';
const GOOD = {
  issuer: 'https://login.example.com/',
  client_id: 'wsops-console',
  client_secret: SECRET,
  domain: 'Example.COM',
  create_admins: 'on',
  password_sign_in: 'on',
};

for (const dialect of DIALECTS) {
  describe(`console single sign-on settings [${dialect}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness(dialect);
    });
    after(() => h.close());

    const row = (ws: string) =>
      h.services.database.db.selectFrom('workspace_sign_in').selectAll().where('workspace_id', '=', ws).executeTakeFirst();

    it('a malformed issuer, domain or a missing client is refused next to its field with what to type, and nothing is stored', async () => {
      const ws = await h.workspace({ seed: false });
      const a = await signedInAdmin(h, ws);
      for (const [change, pattern] of [
        [{ issuer: 'not a url' }, /The issuer &quot;not a url&quot; is not a URL \(expected e\.g\. https:\/\/login\.example\.com\)/],
        [{ issuer: 'http://login.example.com' }, /The issuer must be an https URL/],
        [{ domain: 'not_a_domain' }, /The email domain &quot;not_a_domain&quot; is not an email domain/],
        [{ client_id: ' ' }, /The client ID is required/],
        [{ client_secret: '' }, /The client secret is required/],
      ] as const) {
        const r = await a.post('/console/security/sso', { ...GOOD, ...change });
        assert.equal(r.status, 400, JSON.stringify(change));
        assert.match(r.body, pattern);
        assert.match(r.body, /aria-invalid="true"/, 'the field is marked');
        assert.ok(!r.body.includes(SECRET), 'the secret is not put back in the form');
      }
      assert.equal(await row(ws), undefined);
    });

    it('saved, the client secret is stored sealed and never shown back; left empty it keeps the stored one; it is audited', async () => {
      const ws = await h.workspace({ seed: false });
      const a = await signedInAdmin(h, ws);
      const saved = await a.post('/console/security/sso', GOOD);
      assert.equal(saved.status, 200, saved.body);
      assert.match(saved.body, /Single sign-on saved/);
      assert.match(saved.body, /issuer <code>https:\/\/login\.example\.com<\/code>/);
      assert.match(saved.body, /<code>example\.com<\/code>/, 'the domain as the CLI stores it');
      assert.ok(!saved.body.includes(SECRET));
      const stored = await row(ws);
      assert.ok(stored?.sso_client_secret_ciphertext && !stored.sso_client_secret_ciphertext.includes(SECRET), 'sealed, not in the clear');
      assert.equal(h.services.secretBox.open(stored.sso_client_secret_ciphertext), SECRET);
      assert.equal(stored.sso_create_admins, 1);

      const changed = await a.post('/console/security/sso', { ...GOOD, client_id: 'another-client', client_secret: '' });
      assert.equal(changed.status, 200, changed.body);
      const after_ = await row(ws);
      assert.equal(after_?.sso_client_id, 'another-client');
      assert.equal(h.services.secretBox.open(after_?.sso_client_secret_ciphertext ?? ''), SECRET, 'the stored secret is kept');
      assert.ok(!(await a.get('/console/security')).body.includes(SECRET));

      const audit = await h.services.database.db
        .selectFrom('audit_events')
        .selectAll()
        .where('workspace_id', '=', ws)
        .where('action', '=', 'workspace.sso_set')
        .orderBy('seq')
        .execute();
      assert.equal(audit.length, 2);
      assert.equal(audit[0]?.actor, `console:${a.email}`);
      assert.ok(!audit.some((e) => e.detail.includes(SECRET)), 'the audit trail holds no secret');
    });

    it('with password sign-in switched off, a right password opens nothing; removing single sign-on switches it back on', async () => {
      const ws = await h.workspace({ seed: false });
      const a = await signedInAdmin(h, ws);
      const { password_sign_in: _, ...withoutPasswords } = GOOD;
      const off = await a.post('/console/security/sso', withoutPasswords);
      assert.equal(off.status, 200);
      assert.match(off.body, /password sign-in is off/);
      const signIn = () =>
        h.app.inject({
          method: 'POST',
          url: '/console/sign-in',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: encodeForm({ email: a.email, password: TEST_PASSWORD }),
        });
      assert.equal((await signIn()).statusCode, 403);
      const removed = await a.post('/console/security/sso/remove');
      assert.equal(removed.status, 200);
      assert.match(removed.body, /Single sign-on removed/);
      assert.equal((await signIn()).statusCode, 303);
      const actions = await h.services.database.db
        .selectFrom('audit_events')
        .select('action')
        .where('workspace_id', '=', ws)
        .where('action', 'like', 'workspace.sso_%')
        .orderBy('seq')
        .execute();
      assert.deepEqual(
        actions.map((e) => e.action),
        ['workspace.sso_set', 'workspace.sso_removed'],
      );
    });

    it('"Trust addresses without email_verified" is off unless ticked, shown on the page, stored and audited', async () => {
      const ws = await h.workspace({ seed: false });
      const a = await signedInAdmin(h, ws);
      const off = await a.post('/console/security/sso', GOOD);
      assert.equal(off.status, 200, off.body);
      assert.match(off.body, /<dd>email_verified must be true<\/dd>/);
      assert.equal((await row(ws))?.sso_trust_missing_email_verified, 0);
      const on = await a.post('/console/security/sso', { ...GOOD, trust_missing_email_verified: 'on' });
      assert.equal(on.status, 200, on.body);
      assert.match(on.body, /email_verified must be true; an answer without the claim is trusted/);
      assert.match(on.body, /name="trust_missing_email_verified" value="on" checked/);
      assert.equal((await row(ws))?.sso_trust_missing_email_verified, 1);
      const audit = await h.services.database.db
        .selectFrom('audit_events')
        .select('detail')
        .where('workspace_id', '=', ws)
        .where('action', '=', 'workspace.sso_set')
        .execute();
      assert.deepEqual(
        audit.map((e) => JSON.parse(e.detail).trust_missing_email_verified),
        [false, true],
      );
    });

    it('a form without the session’s CSRF token changes nothing', async () => {
      const ws = await h.workspace({ seed: false });
      const a = await signedInAdmin(h, ws);
      const r = await a.post('/console/security/sso', { ...GOOD, _csrf: '' });
      assert.equal(r.status, 403);
      assert.equal(await row(ws), undefined);
    });
  });
}
