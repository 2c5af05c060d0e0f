/** The console's SCIM provisioning page: a token created there is shown once, works on /scim/v2, is listed by id only, and revoking it stops it. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SignedInAdmin, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const TOKEN = /svc_scim_(?:live|test)_([0-9A-Za-z]{16})_[0-9A-Za-z]{43}/;

for (const dialect of DIALECTS) {
  describe(`console SCIM tokens [${dialect}]`, () => {
    let h: Harness;
    let admin: SignedInAdmin;
    let location: string;
    before(async () => {
      h = await createHarness(dialect);
      const ws = await h.workspace();
      admin = await signedInAdmin(h, ws);
      location = (
        await h.services.database.db
          .selectFrom('records')
          .select('id')
          .where('workspace_id', '=', ws)
          .where('register', '=', 'locations')
          .executeTakeFirstOrThrow()
      ).id;
    });
    after(() => h.close());

    const scimGet = (token: string) =>
      h.app.inject({ method: 'GET', url: '/scim/v2/Users?count=1', headers: { authorization: `Bearer ${token}` } });

    it('creates a token shown once with the base URL, lists it by id, and revokes it', async () => {
      const page = await admin.get('/console/scim');
      assert.equal(page.status, 200);
      assert.match(page.body, /\/scim\/v2/);
      const res = await admin.post('/console/scim', { name: 'Okta', location });
      assert.equal(res.status, 201, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const m = TOKEN.exec(res.body);
      assert.ok(m, 'the token is on the page once');
      assert.equal((await scimGet(m[0])).statusCode, 200);
      const list = await admin.get('/console/scim');
      assert.ok(!TOKEN.test(list.body), 'never shown again');
      assert.ok(list.body.includes(m[1] as string));
      const revoked = await admin.post(`/console/scim/${m[1]}/revoke`);
      assert.equal(revoked.status, 303);
      assert.equal((await scimGet(m[0])).statusCode, 401);
    });

    it('refuses a location of nothing and a name with control characters, with the reason on the form', async () => {
      const bad = await admin.post('/console/scim', { name: 'Okta', location: 'loc_nothing' });
      assert.equal(bad.status, 400);
      assert.match(bad.body, /no location loc_nothing/);
      const name = await admin.post('/console/scim', { name: 'Ok\u001bta', location });
      assert.equal(name.status, 400);
      assert.match(name.body, /control/);
    });
  });
}
