/** The modules page: install and uninstall change what /api/v1 answers; always-installed modules stay. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SignedInAdmin, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

for (const dialect of DIALECTS) {
  describe(`console modules [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let admin: SignedInAdmin;
    let key: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace();
      admin = await signedInAdmin(h, ws);
      key = (await h.key(ws)).key;
    });
    after(() => h.close());

    it('the page lists every module with its registers and scope, installed or not, and the always-installed ones as such', async () => {
      const page = await admin.get('/console/modules');
      assert.equal(page.status, 200);
      for (const m of ['Vendors', 'Assets', 'Workplace', 'People', 'Locations', 'Tasks']) assert.match(page.body, new RegExp(`>${m}<`));
      assert.match(page.body, /\/api\/v1\/purchase-requests/);
      assert.match(page.body, /approvals:read/);
      assert.equal(page.body.match(/Always installed<\/span>/g)?.length, 3);
    });

    it('uninstalling empties the module’s lists on /api/v1 (records kept), installing brings them back, each audited with the admin', async () => {
      const before = await h.get('/api/v1/assets?limit=5', key);
      assert.ok(before.json.data.length > 0);
      const confirm = await admin.get('/console/modules/assets/uninstall');
      assert.match(confirm.body, /records stay stored/);
      assert.equal((await h.get('/api/v1/assets?limit=5', key)).json.data.length, before.json.data.length, 'confirmation changes nothing');
      const off = await admin.post('/console/modules/assets/uninstall');
      assert.equal(off.status, 303);
      assert.deepEqual((await h.get('/api/v1/assets?limit=5', key)).json.data, []);
      assert.match((await admin.get(off.location)).body, /Assets uninstalled/);
      const on = await admin.post('/console/modules/assets/install');
      assert.equal(on.status, 303);
      assert.deepEqual(
        (await h.get('/api/v1/assets?limit=5', key)).json.data.map((r: { id: string }) => r.id),
        before.json.data.map((r: { id: string }) => r.id),
      );
      const audit = await h.services.database.db.selectFrom('audit_events').selectAll().where('target', '=', 'assets').execute();
      assert.deepEqual(
        audit.map((e) => [e.action, e.actor]),
        [
          ['module.uninstalled', `console:${admin.email}`],
          ['module.installed', `console:${admin.email}`],
        ],
      );
    });

    it('an always-installed or unknown module cannot be changed: 404 page, nothing changes', async () => {
      assert.equal((await admin.post('/console/modules/people/uninstall')).status, 404);
      assert.equal((await admin.post('/console/modules/payroll/install')).status, 404);
      assert.equal((await h.get('/api/v1/people?limit=1', key)).json.data.length, 1);
    });
  });
}
