/**
 * Deliveries under load (issue 26), each against a real worker process and the local receiver:
 *  - sustained: `rate` events/s to one endpoint that answers at once, for `seconds`; commit →
 *    received p50 and p99, delivered/s, and whether latency grew (p99 of the events of the
 *    first 20 s against the last 20 s);
 *  - fairness: workspace A floods an endpoint (answering after 7 s by default; see
 *    `fairnessReceivers`); meanwhile workspace B commits 10 events/s to its own endpoint: B's
 *    commit → received p99.
 * The producer runs in this process, on the same machine as the worker and the database.
 */
import type { ChildProcess } from 'node:child_process';
import { sql } from '#kysely';
import { loadConfig } from '../src/config.js';
import { createServices, type Services } from '../src/services.js';
import { createEndpoint } from '../src/webhooks/endpoints/endpoints.js';
import { emitEvents } from '../src/webhooks/events/outbox.js';
import { createWorkspace } from '../src/workspaces/workspaces.js';
import { cpuSeconds, freePort, startProcess, stopProcess } from './processes.js';
import type { Row } from './table.js';
import { BENCH_SECRET, SERVER_FLAGS } from './wsops.js';

interface Stats {
  count: number;
  matched: number;
  p50: number;
  p99: number;
  max: number;
}

export interface DeliveryLoadOptions {
  databaseUrl: string;
  /** Events per second of the sustained row. */
  rate: number;
  /** Seconds of the sustained row and of the fairness row. */
  seconds: number;
  /** Node flags of the worker process (e.g. --cpu-prof). */
  workerFlags?: string[];
  /** The sustained row alone (for a profile of it), or the fairness rows alone. */
  only?: 'sustained' | 'fairness';
  /**
   * How A's flooded receiver answers, one fairness row each: milliseconds ("7000"), a random
   * time in a range ("5000-9500"), or at once ("0"). Default: ["7000"].
   */
  fairnessReceivers?: readonly string[];
}

const TICK_MS = 20;
/** The window compared at the start and the end of the sustained run. */
const EDGE_MS = 20_000;
const FLOOD = 20_000;

/** The local receiver (bench/receiver-server.ts) in its own process on `port`. */
export function startReceiver(port: number): Promise<ChildProcess> {
  return startProcess(['--import', 'tsx', 'bench/receiver-server.ts', String(port)], {}, `http://127.0.0.1:${port}/stats`);
}

/** The receiver's counts and latencies, for the deliveries the query selects (prefix, from, to). */
export async function receiverStats(port: number, q: Record<string, string | number> = {}): Promise<Stats> {
  const query = new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)]));
  return (await (await fetch(`http://127.0.0.1:${port}/stats?${query}`)).json()) as Stats;
}

export async function deliveryLoadBench(o: DeliveryLoadOptions, log: (s: string) => void): Promise<Row[]> {
  const dialect = o.databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL';
  const rport = await freePort();
  const receiver = await startReceiver(rport);
  const stats = (q: Record<string, string | number> = {}) => receiverStats(rport, q);
  const env = { WSOPS_DATABASE_URL: o.databaseUrl, WSOPS_SECRET: BENCH_SECRET, WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' };
  const services = await createServices(loadConfig(env));
  let worker: ChildProcess | undefined;
  const rows: Row[] = [];
  try {
    const wsA = await createWorkspace(services.database.db, 'Load A', ['assets'], new Date().toISOString());
    const wsB = await createWorkspace(services.database.db, 'Load B', ['assets'], new Date().toISOString());
    const subscribe = { scopes: 'assets:read', events: 'asset.assigned' };
    const steady = await createEndpoint(services, wsA.id, { url: `http://127.0.0.1:${rport}/steady`, ...subscribe });
    // A fresh worker process for each row, started as the README tells production to start it.
    const startWorker = async () =>
      startProcess(
        [...SERVER_FLAGS, ...(o.workerFlags ?? []), 'bin/wsops', 'serve', '--only', 'worker', '--port', String(await freePort())],
        { ...env, WSOPS_DEMO: 'false', WSOPS_LOG_LEVEL: 'warn' },
        `http://127.0.0.1:${rport}/stats`,
      );
    worker = await startWorker();
    await waitFor(async () => (await activeCount(services)) === 1, 'verification');

    if (o.only !== 'fairness') {
      // Sustained: `rate` events/s for `seconds`, on a fixed schedule (a late tick catches up).
      // The worker's CPU time per delivery is reported too: unlike the latency, it hardly depends
      // on what else the machine runs.
      const cpu = cpuMeter(services, { worker: worker.pid as number, receiver: receiver.pid as number });
      await cpu.start();
      const start = Date.now();
      const produced = await produce(services, wsA.id, o.rate, o.seconds * 1000);
      const producedRate = produced / ((Date.now() - start) / 1000);
      await waitFor(
        async () => (await stats({ prefix: '/steady' })).matched >= produced,
        'sustained deliveries',
        120_000 + o.seconds * 1000,
      );
      const drained = Date.now();
      const perDelivery = await cpu.perDelivery(produced);
      const all = await stats({ prefix: '/steady' });
      const edge = Math.min(EDGE_MS, Math.round((o.seconds * 1000) / 3 / 1000) * 1000);
      const first = await stats({ prefix: '/steady', from: start, to: start + edge });
      const last = await stats({ prefix: '/steady', from: start + o.seconds * 1000 - edge, to: start + o.seconds * 1000 });
      const delivered = all.matched / ((drained - start) / 1000);
      // Grew: the last window's p99 half as high again as the first's (and 100 ms more, for noise at low values).
      const grew = last.p99 > 1.5 * first.p99 + 100;
      rows.push({
        benchmark: `${dialect}: ${o.rate.toLocaleString('en')} events/s to one endpoint for ${o.seconds} s (produced ${Math.round(producedRate).toLocaleString('en')}/s)`,
        result: `p50 ${all.p50} ms, p99 ${all.p99} ms, ${Math.round(delivered).toLocaleString('en')} delivered/s; p99 first ${edge / 1000} s ${first.p99} ms, last ${edge / 1000} s ${last.p99} ms (${grew ? 'grew' : 'flat'}); CPU µs per delivery: ${perDelivery}`,
        goal: 'p99 ≤ 1 s, flat',
        met: all.p99 <= 1000 && !grew,
      });
      log(`${dialect} sustained: ${rows.at(-1)?.result}`);
    }

    await stopProcess(worker);
    if (o.only === 'sustained') return rows;

    // Fairness: A's flood at a slow (or fast) receiver, B's steady trickle beside it.
    await services.database.db.updateTable('webhook_endpoints').set({ status: 'disabled' }).where('id', '=', steady.id).execute();
    for (const [n, answer] of (o.fairnessReceivers ?? ['7000']).entries()) {
      worker = await startWorker();
      const aPath = answer === '0' ? `/a${n}` : `/slow/${answer}/a${n}`;
      const a = await createEndpoint(services, wsA.id, { url: `http://127.0.0.1:${rport}${aPath}`, ...subscribe });
      const b = await createEndpoint(services, wsB.id, { url: `http://127.0.0.1:${rport}/b${n}`, ...subscribe });
      await waitFor(async () => (await activeCount(services)) === 2, 'verification');
      for (let i = 0; i < FLOOD; i += 500) await emitBatch(services, wsA.id, Math.min(500, FLOOD - i));
      const fairStart = Date.now();
      const trickle = await produce(services, wsB.id, 10, o.seconds * 1000);
      await waitFor(async () => (await stats({ prefix: `/b${n}` })).matched >= trickle, 'B deliveries', 60_000);
      const fair = await stats({ prefix: `/b${n}`, from: fairStart });
      const aSeen = (await stats({ prefix: aPath })).matched;
      const how = answer === '0' ? 'answers at once' : `answers after ${answer.replace('-', '–')} ms`;
      rows.push({
        benchmark: `${dialect}: B's commit → received while A floods a receiver that ${how} (${FLOOD.toLocaleString('en')} events)`,
        result: `p50 ${fair.p50} ms, p99 ${fair.p99} ms, max ${fair.max} ms (${fair.matched} B events; A's receiver got ${aSeen} meanwhile)`,
        goal: 'p99 ≤ 1 s',
        met: fair.p99 <= 1000,
      });
      log(`${dialect} fairness: ${rows.at(-1)?.result}`);
      // The next row starts without this one's endpoints or their backlog.
      await stopProcess(worker);
      worker = undefined;
      await services.database.db.updateTable('webhook_endpoints').set({ status: 'disabled' }).where('id', 'in', [a.id, b.id]).execute();
      await services.database.db.deleteFrom('delivery_jobs').where('endpoint_id', 'in', [a.id, b.id]).execute();
    }
    return rows;
  } finally {
    if (worker) await stopProcess(worker);
    await stopProcess(receiver);
    await services.close();
  }
}

/**
 * CPU time per delivery of each part of the pipeline: the worker and the receiver processes,
 * the producer (this process; it also polls the receiver's stats, a small share), and on
 * PostgreSQL the server's backends of the benchmark database (on SQLite the database's work is
 * inside the worker and the producer). Unlike latency, these hardly depend on the machine's load.
 */
function cpuMeter(services: Services, pids: { worker: number; receiver: number }) {
  const backends = async (): Promise<number[]> =>
    services.database.dialect !== 'postgres'
      ? []
      : (
          await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(services.database.db)
        ).rows.map((r) => r.pid);
  const read = (pid: number) => {
    try {
      return cpuSeconds(pid);
    } catch {
      return 0; // a backend that ended
    }
  };
  let before = { worker: 0, receiver: 0, producer: 0, database: new Map<number, number>() };
  const producer = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  return {
    async start() {
      const pidsNow = await backends();
      before = {
        worker: read(pids.worker),
        receiver: read(pids.receiver),
        producer: producer(),
        database: new Map(pidsNow.map((p) => [p, read(p)])),
      };
    },
    async perDelivery(n: number): Promise<string> {
      const pidsNow = await backends();
      const database = pidsNow.reduce((sum, p) => sum + read(p) - (before.database.get(p) ?? 0), 0);
      const parts: [string, number][] = [
        ['worker', read(pids.worker) - before.worker],
        ['receiver', read(pids.receiver) - before.receiver],
        ['producer', producer() - before.producer],
      ];
      if (services.database.dialect === 'postgres') parts.push(['PostgreSQL', database]);
      const us = (s: number) => Math.round((s * 1e6) / Math.max(1, n));
      const total = parts.reduce((sum, [, s]) => sum + s, 0);
      return `${parts.map(([k, s]) => `${k} ${us(s)}`).join(', ')}; total ${us(total)}`;
    },
  };
}

async function activeCount(services: Services): Promise<number> {
  return (await services.database.db.selectFrom('webhook_endpoints').select('id').where('status', '=', 'active').execute()).length;
}

/** Commits `rate` events/s to a workspace for `ms`, one transaction per 20 ms tick; returns how many. */
export async function produce(services: Services, workspaceId: string, rate: number, ms: number): Promise<number> {
  const start = performance.now();
  const ticks = Math.round(ms / TICK_MS);
  let sent = 0;
  for (let t = 1; t <= ticks; t++) {
    const due = Math.round((rate * t * TICK_MS) / 1000);
    if (due > sent) {
      await emitBatch(services, workspaceId, due - sent);
      sent = due;
    }
    const wait = start + t * TICK_MS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  return sent;
}

async function emitBatch(services: Services, workspaceId: string, n: number): Promise<void> {
  const data = { asset: { id: 'ast_b', asset_tag: 'AST-B', status: 'ASSIGNED' }, assigned_user_id: 'per_b', expected_return_at: null };
  await services.database.db.transaction().execute((trx) =>
    emitEvents(
      trx,
      workspaceId,
      Array.from({ length: n }, () => ({ type: 'asset.assigned' as const, data })),
      Date.now(),
    ),
  );
}

export async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
