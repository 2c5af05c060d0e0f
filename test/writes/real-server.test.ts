/**
 * The write side on a real `wsops serve` (its public and internal listeners, as deployed):
 * a record written on the internal listener is read back at once on the public one (lists,
 * details, search, updated_since), and a server killed with SIGKILL in the middle of an import
 * leaves every batch whole or absent; running the same import again converges.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { adapterOf, openDatabase } from '../../src/store/database.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { freePort, type Running, runWsops, startWsops, until, waitFor } from '../helpers/processes.js';
import { person, site, TEST_TOKEN } from './helpers.js';

const line = (record: Record<string, unknown>) => JSON.stringify({ register: 'people', op: 'upsert', record });

for (const dialect of DIALECTS) {
  describe(`the write side on a real server [${dialect}]`, () => {
    let db: TestDatabase;
    let env: Record<string, string>;
    let server: Running;
    let pub: string;
    let internalPort: number;
    let ws: string;
    let key: string;
    const start = async () => {
      const port = await freePort();
      internalPort = await freePort();
      server = startWsops(['serve', '--port', String(port)], { ...env, WSOPS_INTERNAL_PORT: String(internalPort) });
      pub = `http://127.0.0.1:${port}`;
      await waitFor(`${pub}/healthz`, server);
      await waitFor(`http://127.0.0.1:${internalPort}/healthz`, server);
    };
    const internal = (path: string, init: RequestInit = {}) =>
      fetch(`http://127.0.0.1:${internalPort}/internal/v1/workspaces/${ws}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', ...(init.headers ?? {}) },
      });
    const peopleCount = async () => {
      const d = openDatabase(db.url);
      try {
        const rows = await d.db
          .selectFrom('records')
          .select('id')
          .where('workspace_id', '=', ws)
          .where('register', '=', 'people')
          .execute();
        return rows.length;
      } finally {
        await d.close();
      }
    };

    before(async () => {
      db = await createTestDatabase(dialect);
      env = { WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET, WSOPS_OPERATOR_TOKEN: TEST_TOKEN, WSOPS_LOG_LEVEL: 'warn' };
      ws = JSON.parse(await runWsops(['workspace', 'create', '--name', 'Real', '--json'], env)).id;
      key = JSON.parse(await runWsops(['key', 'create', '--workspace', ws, '--scopes', 'people:read,locations:read', '--json'], env)).key;
      await start();
    });
    after(async () => {
      await server?.stop();
      await db.drop();
    });

    it('a record written on the internal listener is at once in the public list, detail, search and updated_since walk', async () => {
      assert.equal((await internal('/locations/loc_hq', { method: 'PUT', body: JSON.stringify(site('loc_hq')) })).status, 201);
      const auth = { headers: { authorization: `Bearer ${key}` } };
      // Warm the read path first, so a cached or read-ahead page would show if it went stale.
      await fetch(`${pub}/api/v1/people?limit=10`, auth);
      for (let i = 0; i < 5; i++) {
        const id = `per_ryw-${i}`;
        const put = await internal(`/people/${id}`, {
          method: 'PUT',
          body: JSON.stringify(person(id, 'loc_hq', { display_name: `Zephyrine ${i}` })),
        });
        assert.equal(put.status, 201);
        const written = await put.json();
        const detail = await fetch(`${pub}/api/v1/people/${id}`, auth);
        assert.equal(detail.status, 200);
        const list = await (await fetch(`${pub}/api/v1/people?limit=1000`, auth)).json();
        assert.ok(
          list.data.some((p: { id: string }) => p.id === id),
          `list sees ${id}`,
        );
        const search = await (await fetch(`${pub}/api/v1/people?search=zephyrine`, auth)).json();
        assert.equal(search.data.length, i + 1, 'search sees every write so far');
        const since = new Date(Date.parse(written.updated_at) - 1).toISOString();
        const sync = await (await fetch(`${pub}/api/v1/people?updated_since=${encodeURIComponent(since)}`, auth)).json();
        assert.ok(
          sync.data.some((p: { id: string }) => p.id === id),
          'an updated_since walk sees it',
        );
      }
    });

    it('SIGKILL in the middle of an import: every batch is whole or absent; the same import again converges', async () => {
      const total = 20_000;
      const lines = Array.from({ length: total }, (_, i) => line(person(`per_bulk-${i}`, 'loc_hq')));
      const before = await peopleCount();
      // Stream the body slowly, so the server is killed with part of it applied.
      const req = httpRequest({
        host: '127.0.0.1',
        port: internalPort,
        method: 'POST',
        path: `/internal/v1/workspaces/${ws}/import`,
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' },
      });
      req.on('error', () => {});
      let sent = 0;
      const pump = setInterval(() => {
        if (sent >= total) return clearInterval(pump);
        req.write(`${lines.slice(sent, sent + 500).join('\n')}\n`);
        sent += 500;
      }, 20);
      await until(async () => (await peopleCount()) - before >= 3000, 60_000, 'a few batches of the import to commit', 20);
      server.child.kill('SIGKILL');
      await new Promise((r) => server.child.once('exit', r));
      clearInterval(pump);
      req.destroy();
      const applied = (await peopleCount()) - before;
      assert.ok(applied < total, 'killed before the end');
      const batch = adapterOf(dialect).importBatchLines;
      assert.equal(applied % batch, 0, `only whole batches of ${batch} lines: ${applied}`);

      await start();
      const res = await fetch(`http://127.0.0.1:${internalPort}/internal/v1/workspaces/${ws}/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/x-ndjson' },
        body: lines.join('\n'),
      });
      const report = await res.json();
      assert.equal(report.refused_count, 0);
      assert.deepEqual(report.counts.people.upsert, { created: total - applied, updated: 0, unchanged: applied });
      assert.equal((await peopleCount()) - before, total);
    });
  });
}
