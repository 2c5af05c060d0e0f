/** API request counting for the Overview: in memory on the hot path, written once a minute, summed across processes. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { usageSeries } from '../../src/keys/usage.js';
import { createServices } from '../../src/services.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';

const HOUR = 3_600_000;

for (const dialect of DIALECTS) {
  describe(`API usage counting [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace({ seed: false });
    });
    after(() => h.close());

    const storedRows = () => h.services.database.db.selectFrom('api_usage').selectAll().where('workspace_id', '=', ws).execute();
    const storedTotal = async (keyId?: string) =>
      (await storedRows()).filter((r) => keyId === undefined || r.key_id === keyId).reduce((n, r) => n + Number(r.requests), 0);

    it('requests are counted in memory: nothing is written before a flush, then the counts are exact', async () => {
      await h.services.usage.flush();
      const before = await storedTotal();
      const { key, keyId } = await h.key(ws);
      for (let i = 0; i < 7; i++) assert.equal((await h.get('/api/v1/assets?limit=1', key)).status, 200);
      assert.equal(await storedTotal(), before, 'no write per request');
      assert.equal(h.services.usage.pendingRequests(), 7);
      await h.services.usage.flush();
      assert.equal(await storedTotal(keyId), 7);
      assert.equal(h.services.usage.pendingRequests(), 0);
      await h.services.usage.flush();
      assert.equal(await storedTotal(keyId), 7, 'a second flush adds nothing');
    });

    it('every authenticated request counts, refused or not; a request that fails authentication does not', async () => {
      const { key, keyId } = await h.key(ws, ['people:read']);
      assert.equal((await h.get('/api/v1/people?limit=1', key)).status, 200);
      assert.equal((await h.get('/api/v1/assets?limit=1', key)).status, 403);
      assert.equal((await h.get('/api/v1/people/per_nope', key)).status, 404);
      assert.equal((await h.get('/api/v1/people?limit=0', key)).status, 400);
      assert.equal((await h.get('/api/v1/people', `${key}x`)).status, 401);
      await h.services.usage.flush();
      assert.equal(await storedTotal(keyId), 4);
    });

    it('each hour is one row per key, and a flush adds to the row already written', async () => {
      const { key, keyId } = await h.key(ws);
      const start = h.clock();
      await h.get('/api/v1/scopes', key);
      h.clock.advance(HOUR);
      await h.get('/api/v1/scopes', key);
      await h.get('/api/v1/scopes', key);
      await h.services.usage.flush();
      await h.get('/api/v1/scopes', key);
      await h.services.usage.flush();
      const rows = (await storedRows()).filter((r) => r.key_id === keyId).sort((a, b) => a.hour.localeCompare(b.hour));
      assert.deepEqual(
        rows.map((r) => [r.hour, Number(r.requests)]),
        [
          [new Date(Math.floor(start / HOUR) * HOUR).toISOString(), 1],
          [new Date(Math.floor(start / HOUR) * HOUR + HOUR).toISOString(), 3],
        ],
      );
    });

    it('two API processes on one database sum their counts; close() writes the last counts', async () => {
      const { key, keyId } = await h.key(ws);
      const other = await createServices(loadConfig({ WSOPS_DATABASE_URL: h.databaseUrl, WSOPS_SECRET: TEST_SECRET }), {
        clock: h.clock,
        migrate: false,
      });
      for (let i = 0; i < 5; i++) await h.get('/api/v1/scopes', key);
      for (let i = 0; i < 3; i++) other.usage.count(ws, keyId, h.clock());
      await other.close();
      assert.equal(await storedTotal(keyId), 3, 'the closing process wrote its counts');
      await h.services.usage.flush();
      assert.equal(await storedTotal(keyId), 8);
    });

    it('the series per key covers every bucket of the range (zero-filled) and only this workspace', async () => {
      const other = await h.workspace({ seed: false });
      const a = await h.key(ws);
      const b = await h.key(ws);
      const c = await h.key(other);
      await h.services.usage.flush();
      h.clock.set(Date.parse('2026-12-01T10:30:00Z'));
      await h.get('/api/v1/scopes', a.key);
      await h.get('/api/v1/scopes', c.key);
      h.clock.set(Date.parse('2026-12-01T12:05:00Z'));
      await h.get('/api/v1/scopes', a.key);
      await h.get('/api/v1/scopes', b.key);
      await h.get('/api/v1/scopes', b.key);
      await h.services.usage.flush();
      const to = Date.parse('2026-12-01T13:00:00Z');
      const series = await usageSeries(h.services.database.db, ws, { from: to - 4 * 3_600_000, to, bucket: 'hour' });
      assert.deepEqual(series.buckets, [
        '2026-12-01T09:00:00.000Z',
        '2026-12-01T10:00:00.000Z',
        '2026-12-01T11:00:00.000Z',
        '2026-12-01T12:00:00.000Z',
      ]);
      assert.equal(series.total, 4);
      assert.deepEqual(
        series.keys.map((k) => [k.keyId, k.total, k.requests]),
        [
          [a.keyId, 2, [0, 1, 0, 1]],
          [b.keyId, 2, [0, 0, 0, 2]],
        ].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
      );
      assert.ok(!series.keys.some((k) => k.keyId === c.keyId), "another workspace's key is not in the series");
      const days = await usageSeries(h.services.database.db, ws, { from: Date.parse('2026-11-25T00:00:00Z'), to, bucket: 'day' });
      assert.equal(days.buckets.length, 7);
      assert.equal(days.buckets.at(-1), '2026-12-01T00:00:00.000Z');
      assert.equal(days.keys.find((k) => k.keyId === a.keyId)?.requests.at(-1), 2);
    });
  });
}
