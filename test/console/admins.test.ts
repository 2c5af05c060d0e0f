/** The admins page: invite (one-time link), remove with confirmation, never yourself or the last admin. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listAdmins } from '../../src/sign-in/admins.js';
import { setPassword } from '../../src/sign-in/passwords.js';
import { loadSession } from '../../src/sign-in/sessions.js';
import { encodeForm, type SignedInAdmin, sessionCookieOf, signedInAdmin, TEST_PASSWORD } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

for (const dialect of DIALECTS) {
  describe(`console admins [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let otherWs: string;
    let me: SignedInAdmin;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace({ seed: false });
      otherWs = await h.workspace({ seed: false });
      me = await signedInAdmin(h, ws);
    });
    after(() => h.close());

    it('inviting shows a one-time link valid 24 hours that opens the set-password page, and lists the invitee', async () => {
      const res = await me.post('/console/admins', { email: 'New.Colleague@example.com' });
      assert.equal(res.status, 201, res.body);
      const url = /value="(http[^"]+\/console\/link\/[0-9A-Za-z]{43})"/.exec(res.body)?.[1];
      assert.ok(url, 'the link is on the page');
      assert.match(res.body, /24 hours/);
      const page = await h.app.inject({ method: 'GET', url: new URL(url).pathname });
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /new.colleague@example.com/);
      const list = await me.get('/console/admins');
      assert.match(list.body, /Invited, not signed in yet/);
    });

    it('an invalid address is refused next to the field, keeping what was typed', async () => {
      const bad = await me.post('/console/admins', { email: 'not-an-address' });
      assert.equal(bad.status, 400);
      assert.match(bad.body, /is not an email address/);
      assert.match(bad.body, /value="not-an-address"/);
    });

    it('inviting an address answers the same whether or not another workspace holds it (no cross-tenant enumeration); each workspace gets its own admin', async () => {
      const elsewhere = await signedInAdmin(h, otherWs);
      const taken = await me.post('/console/admins', { email: elsewhere.email });
      const fresh = await me.post('/console/admins', { email: 'nobody.anywhere@example.com' });
      assert.equal(taken.status, fresh.status);
      // The answer to the invite itself; the list of admins below it grows by one each time.
      const shape = (body: string, email: string) =>
        body
          .replace(/<section aria-labelledby="admin-list">[\s\S]*?<\/section>/, '')
          .replaceAll(email, 'EMAIL')
          .replace(/[A-Za-z0-9]{43}/g, 'TOKEN')
          .replace(/adm_[A-Za-z0-9]+/g, 'ADM');
      assert.equal(shape(taken.body, elsewhere.email), shape(fresh.body, 'nobody.anywhere@example.com'));
      assert.ok((await listAdmins(h.services.database.db, ws)).some((a) => a.email === elsewhere.email));
      assert.ok(
        (await listAdmins(h.services.database.db, otherWs)).some((a) => a.email === elsewhere.email),
        'still admin of the other workspace',
      );
    });

    it('an address that administers two workspaces signs in to the one whose password it gives', async () => {
      const email = `two.hats-${h.dialect}@example.com`;
      const a = await signedInAdmin(h, ws, { email });
      const b = await signedInAdmin(h, otherWs, { email });
      assert.notEqual(a.adminId, b.adminId);
      await setPassword(h.services.database.db, b.adminId, 'a different long password for B');
      const signIn = async (password: string) => {
        const res = await h.app.inject({
          method: 'POST',
          url: '/console/sign-in',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            origin: h.services.config.baseUrl,
            host: new URL(h.services.config.baseUrl).host,
          },
          payload: encodeForm({ email, password }),
        });
        const cookie = sessionCookieOf(res.headers);
        assert.equal(res.statusCode, 303, res.body.slice(0, 300));
        const loaded = await loadSession(h.services.database.db, cookie?.split('=')[1] ?? '', h.clock());
        return loaded?.admin.workspaceId;
      };
      assert.equal(await signIn(TEST_PASSWORD), ws);
      assert.equal(await signIn('a different long password for B'), otherWs);
    });

    it('removing asks for confirmation, then signs the admin out at once and leaves the keys they created working', async () => {
      const other = await signedInAdmin(h, ws);
      const created = await other.post('/console/keys', {
        name: 'Made by other',
        scopes: ['people:read'],
        environment: 'test',
        days: '30',
      });
      const key = /svc_sk_test_[0-9A-Za-z]{16}_[0-9A-Za-z]{43}/.exec(created.body)?.[0];
      assert.ok(key);
      const confirm = await me.get(`/console/admins/${other.adminId}/remove`);
      assert.equal(confirm.status, 200);
      assert.match(confirm.body, /keep working/);
      assert.equal((await other.get('/console/keys')).status, 200, 'the confirmation page changes nothing');
      const done = await me.post(`/console/admins/${other.adminId}/remove`);
      assert.equal(done.status, 303);
      const after = await other.get('/console/keys');
      assert.equal(after.status, 303, 'the removed admin is signed out');
      assert.match(after.location, /^\/console\/sign-in/);
      assert.equal((await h.get('/api/v1/people?limit=1', key)).status, 200, 'their key keeps working');
      const audit = await h.services.database.db.selectFrom('audit_events').selectAll().where('action', '=', 'admin.removed').execute();
      assert.ok(audit.some((e) => e.target === other.adminId && e.actor === `console:${me.email}`));
    });

    it('you cannot remove yourself, nor the last admin', async () => {
      const self = await me.post(`/console/admins/${me.adminId}/remove`);
      assert.equal(self.status, 409);
      assert.match(self.body, /cannot remove yourself/);
      const solo = await createHarness(dialect);
      try {
        const w = await solo.workspace({ seed: false });
        const only = await signedInAdmin(solo, w);
        const r = await only.post(`/console/admins/${only.adminId}/remove`);
        assert.equal(r.status, 409);
        assert.equal((await listAdmins(solo.services.database.db, w)).length, 1);
      } finally {
        await solo.close();
      }
      assert.equal((await me.get('/console/admins')).status, 200, 'still signed in');
    });

    it("another workspace's admin id gets a 404 page and stays", async () => {
      const theirs = await signedInAdmin(h, otherWs);
      assert.equal((await me.get(`/console/admins/${theirs.adminId}/remove`)).status, 404);
      assert.equal((await me.post(`/console/admins/${theirs.adminId}/remove`)).status, 404);
      assert.equal((await theirs.get('/console/keys')).status, 200);
    });
  });
}
