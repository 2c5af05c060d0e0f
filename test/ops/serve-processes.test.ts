/**
 * `wsops serve` as real processes: the internal listener starts with WSOPS_INTERNAL_PORT (for
 * the worker too), the public port never serves it, and a test deployment without WSOPS_SECRET
 * says in its log that the generated secret is stored in the database. WSOPS_PAGE_THREADS, gone
 * with the page threads (ADR 25), is still accepted, with a warning to remove it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { freePort, startWsops, waitFor } from '../helpers/processes.js';

/** The `wsops starting` log line of a serve process's output. */
function startLine(output: string): string {
  const line = output.split('\n').find((l) => l.includes('"wsops starting"'));
  assert.ok(line, output);
  return line;
}

// Ports come from freePort, the kernel's word that they are free now: a random one from
// 20000–40000 could be one of the suite's own outgoing connections (taken from 32768 up).

for (const dialect of DIALECTS) {
  describe(`serve processes and the internal listener [${dialect}]`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase(dialect);
    });
    after(() => db.drop());

    it('`serve --only worker` with WSOPS_INTERNAL_PORT answers /readyz, /healthz and /metrics; without WSOPS_SECRET (test) it logs that the secret is stored in the database; WSOPS_PAGE_THREADS starts with a warning to remove it', async () => {
      const internalPort = await freePort();
      const worker = startWsops(['serve', '--only', 'worker'], {
        WSOPS_DATABASE_URL: db.url,
        WSOPS_SECRET: '',
        WSOPS_INTERNAL_PORT: String(internalPort),
        WSOPS_PAGE_THREADS: '1',
      });
      try {
        const ready = await waitFor(`http://127.0.0.1:${internalPort}/readyz`, worker);
        assert.equal(ready.status, 200);
        assert.deepEqual(((await ready.json()) as { ok: boolean }).ok, true);
        assert.equal((await fetch(`http://127.0.0.1:${internalPort}/healthz`)).status, 200);
        const metrics = await (await fetch(`http://127.0.0.1:${internalPort}/metrics`)).text();
        assert.match(metrics, /^wsops_delivery_jobs\{state="pending"\} 0$/m);
        assert.match(metrics, /^process_resident_memory_bytes \d+/m);
        const warning = worker
          .output()
          .split('\n')
          .filter((l) => l.includes('WSOPS_SECRET is unset'));
        assert.equal(warning.length, 1, worker.output());
        assert.match(warning[0] as string, /"level":40/, 'logged as a warning');
        assert.match(warning[0] as string, /stored in the database/);
        assert.match(warning[0] as string, /openssl rand -hex 32/);
        const deprecated = worker
          .output()
          .split('\n')
          .filter((l) => l.includes('WSOPS_PAGE_THREADS'));
        assert.equal(deprecated.length, 1, worker.output());
        assert.match(deprecated[0] as string, /"level":40/, 'logged as a warning, not refused');
        assert.match(deprecated[0] as string, /no longer used.*Remove the setting/);
      } finally {
        await worker.stop();
      }
    });

    it('`serve` with both ports: the public port answers 404 on /metrics, /readyz and /internal/v1; the internal port serves them; with WSOPS_SECRET set there is no warning', async () => {
      const publicPort = await freePort();
      let internalPort = await freePort();
      while (internalPort === publicPort) internalPort = await freePort();
      const server = startWsops(['serve', '--port', String(publicPort)], {
        WSOPS_DATABASE_URL: db.url,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_INTERNAL_PORT: String(internalPort),
      });
      try {
        await waitFor(`http://127.0.0.1:${publicPort}/healthz`, server);
        await waitFor(`http://127.0.0.1:${internalPort}/healthz`, server);
        for (const path of ['/metrics', '/readyz', '/internal/v1/actions/asset.return']) {
          const res = await fetch(`http://127.0.0.1:${publicPort}${path}`);
          assert.equal(res.status, 404, path);
          assert.equal(((await res.json()) as { code: string }).code, 'not_found');
        }
        assert.equal((await fetch(`http://127.0.0.1:${internalPort}/readyz`)).status, 200);
        assert.equal((await fetch(`http://127.0.0.1:${internalPort}/metrics`)).status, 200);
        const refused = await fetch(`http://127.0.0.1:${internalPort}/internal/v1/actions/asset.return`, { method: 'POST' });
        assert.equal(refused.status, 403, 'no operator token configured: the internal API refuses everything');
        assert.ok(!server.output().includes('WSOPS_SECRET is unset'), server.output());
        assert.ok(startLine(server.output()).includes('"wsops starting"'));
        assert.ok(!server.output().includes('WSOPS_PAGE_THREADS'), 'no warning for a setting not given');
      } finally {
        await server.stop();
      }
    });
  });
}
