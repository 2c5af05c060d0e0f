/**
 * `wsops serve --processes N` as real processes: N API processes share the public port, the
 * webhook dispatcher and the scheduler run once (each event is delivered once), /metrics on
 * the internal listener adds every process's counts up, SIGTERM stops them all, and a bad
 * `--processes` is refused with the rule.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { freePort, runWsops, startWsops, until, waitFor } from '../helpers/processes.js';
import { Receiver } from '../helpers/receiver.js';

/** The pids of a process's children (the API processes of a cluster's primary). */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.trim())
      .map(Number);
  } catch {
    return []; // ps exits 1 when there is none
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** One sample of a Prometheus text exposition, by its exact name and labels. */
function sample(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('serve --processes: refused with the rule', () => {
  const env = { WSOPS_DATABASE_URL: 'sqlite::memory:', WSOPS_SECRET: TEST_SECRET };
  for (const [label, args, extra, pattern] of [
    ['zero', ['--processes', '0'], {}, /--processes must be a whole number from 1 to \d+ \(4 per CPU; this machine has \d+\); got "0"/],
    ['more than 4 per CPU', ['--processes', '100000'], {}, /--processes must be a whole number from 1 to \d+/],
    ['with --only worker', ['--processes', '2', '--only', 'worker'], {}, /--only worker runs none/],
    ['over an in-memory SQLite database', ['--processes', '2'], {}, /sqlite::memory: is private to one process/],
    [
      'live without WSOPS_REDIS_URL',
      ['--processes', '2'],
      { WSOPS_DATABASE_URL: 'sqlite:/tmp/unused.db', WSOPS_ENV: 'live' },
      /needs WSOPS_REDIS_URL when WSOPS_ENV=live/,
    ],
  ] as const) {
    it(`${label}: exit 2, one line saying what to do`, async () => {
      const server = startWsops(['serve', ...args], { ...env, ...extra });
      const code = await new Promise((r) => server.child.once('exit', r));
      assert.equal(code, 2, server.output());
      assert.match(server.output(), pattern);
    });
  }
});

for (const dialect of DIALECTS) {
  describe(`serve --processes 2 [${dialect}]`, () => {
    let db: TestDatabase;
    let receiver: Receiver;
    before(async () => {
      db = await createTestDatabase(dialect);
      receiver = await new Receiver().start();
    });
    after(async () => {
      await receiver.stop();
      await db.drop();
    });

    it('two API processes serve the port, one dispatcher delivers each event once, /metrics adds up, SIGTERM stops all', async () => {
      const env = {
        WSOPS_DATABASE_URL: db.url,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
      };
      await runWsops(['migrate'], env);
      const ws = JSON.parse(await runWsops(['workspace', 'create', '--name', 'Cluster', '--json'], env)).id as string;
      const key = JSON.parse(await runWsops(['key', 'create', '--workspace', ws, '--scopes', 'assets:read', '--json'], env)).key as string;
      const port = await freePort();
      let internalPort = await freePort();
      while (internalPort === port) internalPort = await freePort();
      const server = startWsops(['serve', '--port', String(port), '--processes', '2'], {
        ...env,
        WSOPS_INTERNAL_PORT: String(internalPort),
      });
      const api = `http://127.0.0.1:${port}`;
      const internal = `http://127.0.0.1:${internalPort}`;
      let children: number[] = [];
      try {
        await until(
          () => {
            if (server.child.exitCode !== null) throw new Error(`serve exited: ${server.output()}`);
            return server.output().includes('"API processes listening"');
          },
          60_000,
          'both API processes to listen',
          50,
        );
        await waitFor(`${internal}/healthz`, server);
        children = childrenOf(server.child.pid as number);
        assert.equal(children.length, 2, `two API processes: ${server.output()}`);
        const listening = server
          .output()
          .split('\n')
          .filter((l) => l.includes(`"Server listening at http://127.0.0.1:${port}"`));
        assert.equal(listening.length, 2, 'each API process listens on the shared port');
        assert.match(server.output(), /WSOPS_REDIS_URL is unset: each API process counts rate limits/);

        // Requests on fresh connections are spread over both processes; /metrics counts them all.
        const requests = 40;
        for (let i = 0; i < requests; i++) {
          const res = await fetch(`${api}/api/v1/scopes`, { headers: { authorization: `Bearer ${key}`, connection: 'close' } });
          assert.equal(res.status, 200);
          await res.arrayBuffer();
        }
        const metrics = await (await fetch(`${internal}/metrics`)).text();
        assert.equal(sample(metrics, 'wsops_http_requests_total{method="GET",route="/api/v1/scopes",status="200"}'), requests, metrics);
        assert.equal(sample(metrics, 'wsops_metrics_processes_missing'), 0);
        assert.equal(sample(metrics, 'wsops_api_processes'), 2);

        // Events: the endpoint's verification and five test events, each delivered once.
        const ep = JSON.parse(
          await runWsops(
            [
              'endpoint',
              'create',
              '--workspace',
              ws,
              '--url',
              receiver.url('/hook'),
              '--scopes',
              'assets:read',
              '--events',
              'asset.assigned',
              '--json',
            ],
            env,
          ),
        );
        for (let i = 0; i < 5; i++) await runWsops(['endpoint', 'test', '--workspace', ws, ep.id, '--json'], env);
        await until(() => receiver.at('/hook').length >= 6, 30_000, 'six deliveries');
        const settled = await until(
          async () => {
            const m = await (await fetch(`${internal}/metrics`)).text();
            return sample(m, 'wsops_delivery_jobs{state="succeeded"}') === 6 ? m : undefined;
          },
          30_000,
          'the six jobs recorded as succeeded (counted once, not once per process)',
        );
        assert.equal(sample(settled, 'wsops_delivery_jobs{state="pending"}'), 0);
        assert.equal(sample(settled, 'wsops_delivery_attempts_total{outcome="succeeded",error_class="none"}'), 6);
        const eventIds = receiver.at('/hook').map((r) => JSON.parse(r.body).id as string);
        assert.equal(eventIds.length, 6, 'no event delivered twice');
        assert.equal(new Set(eventIds).size, 6);
        const starts = server
          .output()
          .split('\n')
          .filter((l) => l.includes('"wsops starting"'));
        assert.equal(starts.length, 1, 'one process runs the dispatcher and the scheduler');
      } finally {
        await server.stop();
      }
      assert.equal(server.child.exitCode, 0, server.output());
      for (const pid of children) assert.ok(!alive(pid), `API process ${pid} stopped with the primary`);
    });
  });
}
