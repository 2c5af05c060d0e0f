/**
 * PostgreSQL restarted under load: 10,000 deliveries in flight, `pg_ctl restart` in the middle.
 * Afterwards every (event, endpoint) pair has arrived at least once, every job is recorded as
 * succeeded, and the same worker carried on by itself (it logged the outage and its recovery).
 *
 * The restart must not touch the shared server other suites use, so this suite starts a
 * private cluster (initdb as the postgres user: the server refuses to run as root) on a free
 * port and removes it afterwards. PostgreSQL only: SQLite has no server to restart.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createServices, type Services } from '../../src/services.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { emitEvents, type PendingEvent } from '../../src/webhooks/events/outbox.js';
import { createWorkspace, parseModules } from '../../src/workspaces/workspaces.js';
import { DIALECTS } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { Receiver } from '../helpers/receiver.js';

const WORKSPACES = 2;
const ENDPOINTS_PER_WORKSPACE = 5;
const EVENTS_PER_WORKSPACE = 1000; // 2 × 5 × 1000 = 10,000 deliveries

function pgBin(name: string): string | undefined {
  try {
    const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a));
    return versions.length ? `/usr/lib/postgresql/${versions[0]}/bin/${name}` : undefined;
  } catch {
    return undefined;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A throwaway PostgreSQL cluster owned by the postgres user. */
class PrivateCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'wsops-pg-'));
  readonly data = join(this.dir, 'data');
  port = 0;

  private pgCtl(...args: string[]): void {
    execFileSync('runuser', ['-u', 'postgres', '--', pgBin('pg_ctl') as string, '-D', this.data, '-l', join(this.dir, 'log'), ...args], {
      stdio: 'ignore',
    });
  }

  async start(): Promise<string> {
    chownSync(this.dir, Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), 0);
    execFileSync(
      'runuser',
      ['-u', 'postgres', '--', pgBin('initdb') as string, '-D', this.data, '-A', 'trust', '-U', 'postgres', '--no-sync'],
      {
        stdio: 'ignore',
      },
    );
    this.port = await freePort();
    // Durability is not what is tested here; fsync off keeps the 10,000 deliveries quick.
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off`;
    this.pgCtl('-o', options, '-w', 'start');
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  restart(): void {
    this.pgCtl('-m', 'fast', '-w', 'restart');
  }

  remove(): void {
    try {
      this.pgCtl('-m', 'immediate', '-w', 'stop');
    } catch {
      /* not running */
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const available = DIALECTS.includes('postgres') && pgBin('initdb') !== undefined && process.getuid?.() === 0;

describe('PostgreSQL restarted under load [postgres]', { skip: available ? false : 'needs PostgreSQL binaries and root (runuser)' }, () => {
  const cluster = new PrivateCluster();
  let services: Services;
  let rx: Receiver;
  let dispatcher: Dispatcher | undefined;
  const logLines: { level: number; msg: string }[] = [];

  before(async () => {
    const url = await cluster.start();
    const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
    services = await createServices(
      loadConfig({ WSOPS_DATABASE_URL: url, WSOPS_SECRET: TEST_SECRET, WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' }),
      { logger },
    );
    rx = await new Receiver().start();
  });
  after(async () => {
    await dispatcher?.stop();
    await rx?.stop();
    await services?.close().catch(() => {});
    cluster.remove();
  });

  it('10,000 deliveries in flight survive a restart of PostgreSQL: every pair arrives, nothing is lost, the worker recovers by itself', async () => {
    const db = services.database.db;
    const at = () => new Date(services.clock()).toISOString();
    const paths: string[] = [];
    const workspaces: string[] = [];
    for (let w = 0; w < WORKSPACES; w++) {
      const ws = await createWorkspace(db, `Restart ${w}`, parseModules('all'), at());
      workspaces.push(ws.id);
      for (let e = 0; e < ENDPOINTS_PER_WORKSPACE; e++) {
        const path = `/pg-${w}-${e}`;
        paths.push(path);
        await createEndpoint(services, ws.id, { url: rx.url(path), scopes: 'assets:read', events: 'asset.assigned' });
      }
    }
    const setup = new Dispatcher(services);
    while ((await setup.runOnce()) > 0); // verification: the endpoints become active
    for (const ws of workspaces) {
      const events: PendingEvent[] = Array.from({ length: EVENTS_PER_WORKSPACE }, (_, i) => ({
        type: 'asset.assigned',
        data: { asset: { id: `ast_${i}`, asset_tag: `AST-${i}`, status: 'ASSIGNED' }, assigned_user_id: 'per_x', expected_return_at: null },
      }));
      await db.transaction().execute((trx) => emitEvents(trx, ws, events, services.clock()));
    }
    await setup.stop();
    const active = await db.selectFrom('webhook_endpoints').select('id').where('status', '=', 'active').execute();
    assert.equal(active.length, WORKSPACES * ENDPOINTS_PER_WORKSPACE);
    const expected = WORKSPACES * ENDPOINTS_PER_WORKSPACE * EVENTS_PER_WORKSPACE;

    const arrived = new Set<string>();
    rx.fallback = (_req, res, body) => {
      res.writeHead(200).end('ok');
      const event = JSON.parse(body) as { id: string; type: string };
      if (event.type === 'asset.assigned') arrived.add(`${event.id}|${_req.url}`);
    };
    // A short lease, so jobs whose outcome was lost with the connection are retried quickly.
    dispatcher = new Dispatcher(services, { leaseMs: 3000 });
    dispatcher.start();
    await until(() => arrived.size >= expected / 5, 60_000, 'a fifth of the deliveries');
    const beforeRestart = arrived.size;
    cluster.restart();
    assert.ok(arrived.size < expected, `deliveries were still in flight at the restart (${beforeRestart} of ${expected} before it)`);
    await until(() => arrived.size === expected, 60_000, `every (event, endpoint) pair (${arrived.size} of ${expected})`);
    await until(
      async () => {
        try {
          const open = await db.selectFrom('delivery_jobs').select('id').where('state', '!=', 'succeeded').limit(1).execute();
          return open.length === 0;
        } catch {
          return false;
        }
      },
      30_000,
      'every job recorded as succeeded',
    );
    const jobs = await db.selectFrom('delivery_jobs').select(['id', 'attempts']).where('event_type', '=', 'asset.assigned').execute();
    assert.equal(jobs.length, expected, 'no job lost');
    assert.ok(
      jobs.every((j) => j.attempts >= 1),
      'every job has its attempt recorded',
    );
    const warned = logLines.filter((l) => l.level >= 40).map((l) => l.msg);
    assert.ok(warned.length > 0, 'the outage was logged');
    assert.ok(
      logLines.some((l) => l.msg === 'delivery recovered'),
      `the worker logged its recovery (warnings: ${[...new Set(warned)].join('; ')})`,
    );
  });
});
