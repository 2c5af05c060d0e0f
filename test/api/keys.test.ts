/** API key rules: format, hashing, life, plan limit, revocation, last use, audit trail. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listAudit } from '../../src/audit/audit.js';
import { createKey, listKeys, revokeKey } from '../../src/keys/keys.js';
import { READ_SCOPES } from '../../src/registers/define.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

for (const dialect of DIALECTS) {
  describe(`API keys [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_MAX_KEYS: '3' });
      ws = await h.workspace({ seed: false });
    });
    after(() => h.close());

    const create = (days?: number) =>
      createKey(h.services.database, {
        workspaceId: ws,
        scopes: ['people:read'],
        environment: 'test',
        days,
        now: h.clock(),
        maxKeys: h.services.config.maxKeys,
      });

    it('key format is svc_sk_<env>_<key_id>_<secret>, base62, and the secret is stored only as a hash', async () => {
      const k = await create();
      const m = /^svc_sk_test_([0-9A-Za-z]+)_([0-9A-Za-z]+)$/.exec(k.key);
      assert.ok(m, k.key);
      assert.equal(m[1], k.key_id);
      assert.ok((m[2] as string).length * Math.log2(62) >= 192, 'secret carries at least 192 bits');
      const row = await h.services.database.db.selectFrom('api_keys').selectAll().where('key_id', '=', k.key_id).executeTakeFirstOrThrow();
      assert.ok(!JSON.stringify(row).includes(m[2] as string), 'the secret is not stored');
      await revokeKey(h.services.database.db, ws, k.key_id, h.clock());
    });

    it('key life defaults to 90 days, may be up to 365, and no more', async () => {
      const k = await create();
      assert.equal(Date.parse(k.expires_at) - h.clock(), 90 * 86_400_000);
      const year = await create(365);
      assert.equal(Date.parse(year.expires_at) - h.clock(), 365 * 86_400_000);
      await assert.rejects(create(366), /1 to 365/);
      await assert.rejects(create(0), /1 to 365/);
      for (const x of [k, year]) await revokeKey(h.services.database.db, ws, x.key_id, h.clock());
    });

    it('the plan limit counts unrevoked keys; revoking frees a slot', async () => {
      const made = [await create(), await create(), await create()];
      await assert.rejects(create(), (err: Error & { code?: string }) => err.code === 'limit_reached' && /allows 3/.test(err.message));
      await revokeKey(h.services.database.db, ws, made[0]?.key_id as string, h.clock());
      const again = await create();
      for (const x of [...made.slice(1), again]) await revokeKey(h.services.database.db, ws, x.key_id, h.clock());
    });

    it('revocation is effective on the very next request; both keys work during a rotation', async () => {
      const oldKey = await create();
      const newKey = await create();
      assert.equal((await h.get('/api/v1/people', oldKey.key)).status, 200);
      assert.equal((await h.get('/api/v1/people', newKey.key)).status, 200);
      await revokeKey(h.services.database.db, ws, oldKey.key_id, h.clock());
      assert.equal((await h.get('/api/v1/people', oldKey.key)).status, 401);
      assert.equal((await h.get('/api/v1/people', newKey.key)).status, 200);
      await revokeKey(h.services.database.db, ws, newKey.key_id, h.clock());
    });

    it('last use is recorded coarsely: at most one write per minute', async () => {
      const k = await create();
      const lastUsed = async () => (await listKeys(h.services.database.db, ws, h.clock())).find((x) => x.key_id === k.key_id)?.last_used_at;
      assert.equal(await lastUsed(), null);
      await h.get('/api/v1/people', k.key);
      await h.lastUsesWritten();
      const first = await lastUsed();
      assert.equal(first, new Date(h.clock()).toISOString());
      h.clock.advance(30_000);
      await h.get('/api/v1/people', k.key);
      await h.lastUsesWritten();
      assert.equal(await lastUsed(), first, 'no write within the minute');
      h.clock.advance(31_000);
      await h.get('/api/v1/people', k.key);
      await h.lastUsesWritten();
      assert.equal(await lastUsed(), new Date(h.clock()).toISOString());
      await revokeKey(h.services.database.db, ws, k.key_id, h.clock());
    });

    it('the audit trail records key creation and revocation with the key_id', async () => {
      const k = await create();
      await revokeKey(h.services.database.db, ws, k.key_id, h.clock());
      const audit = await listAudit(h.services.database.db, ws);
      assert.ok(audit.some((e) => e.action === 'key.created' && e.key_id === k.key_id));
      assert.ok(audit.some((e) => e.action === 'key.revoked' && e.key_id === k.key_id));
      assert.ok(!JSON.stringify(audit).includes(k.key.split('_').at(-1) as string), 'no secret in the audit trail');
    });

    it('a key belongs to the workspace: it keeps working whoever created it', async () => {
      const k = await createKey(h.services.database, {
        workspaceId: ws,
        scopes: [...READ_SCOPES],
        environment: 'test',
        createdBy: 'console:departed-admin@example.com',
        now: h.clock(),
        maxKeys: 3,
      });
      assert.equal((await h.get('/api/v1/scopes', k.key)).status, 200);
      await revokeKey(h.services.database.db, ws, k.key_id, h.clock());
    });
  });
}
