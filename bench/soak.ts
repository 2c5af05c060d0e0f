/**
 * The soak: one `wsops serve` process (API + delivery worker, the documented production command
 * line) under the read load at 80% of its measured maximum plus 500 events/s emitted through
 * the outbox and delivered to a local receiver, for the given seconds. Per window (a minute; a
 * quarter of the run when it is shorter than two minutes), after a warm-up under the same load,
 * it reports errors, the read p99, the webhook commit→receive p99 and the server's mean RSS.
 * Errors must be 0 and RSS flat within 10% of the first window after the warm-up.
 */
import { readFileSync } from 'node:fs';
import { loadConfig } from '../src/config.js';
import { seedRegister } from '../src/seed/seed.js';
import { createServices, type Services } from '../src/services.js';
import { createEndpoint } from '../src/webhooks/endpoints/endpoints.js';
import { emitEvents } from '../src/webhooks/events/outbox.js';
import { createWorkspace } from '../src/workspaces/workspaces.js';
import { freePort, type LoadResult, load, startProcess, stopProcess } from './processes.js';
import { assetsReadKey, BENCH_SECRET, startWsops } from './wsops.js';

const EVENTS_PER_SECOND = 500;
const TICK_MS = 50;
const READ_SHARE = 0.8;
const MAX_RSS_DRIFT = 0.1;

export interface SoakOptions {
  seconds: number;
  databaseUrl: string;
  records: number;
}

export interface SoakWindow {
  /** 0 is the warm-up, not counted in the RSS drift. */
  index: number;
  seconds: number;
  /** Events emitted per wall-clock second of the window (load start-up included). */
  eventsPerSecond: number;
  readRps: number;
  readP99: number;
  readErrors: number;
  eventsEmitted: number;
  emitErrors: number;
  webhookP99: number;
  rssMb: number;
}

export interface SoakResult {
  readMaxRps: number;
  targetRps: number;
  windows: SoakWindow[];
  failedAttempts: number;
  undelivered: number;
  errors: number;
  rssDrift: number;
  ok: boolean;
  table: string;
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Emits EVENTS_PER_SECOND through the outbox (one transaction per tick) until stopped. */
function startEmitter(services: Services, workspaceId: string) {
  const data = {
    asset: { id: 'ast_soak', asset_tag: 'AST-SOAK', status: 'ASSIGNED' },
    assigned_user_id: 'per_soak',
    expected_return_at: null,
  };
  const perTick = (EVENTS_PER_SECOND * TICK_MS) / 1000;
  let running = true;
  const counts = { emitted: 0, errors: 0 };
  const done = (async () => {
    let next = performance.now();
    while (running) {
      try {
        await services.database.db.transaction().execute((trx) =>
          emitEvents(
            trx,
            workspaceId,
            Array.from({ length: perTick }, () => ({ type: 'asset.assigned' as const, data })),
            Date.now(),
          ),
        );
        counts.emitted += perTick;
      } catch (err) {
        counts.errors++;
        process.stderr.write(`[soak] emit failed: ${(err as Error).message}\n`);
      }
      // A fixed schedule, so a slow tick is caught up rather than lowering the rate.
      next += TICK_MS;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    counts,
    async stop() {
      running = false;
      await done;
    },
  };
}

function windowsOf(seconds: number): number[] {
  if (seconds >= 120) {
    const full = Math.floor(seconds / 60);
    const rest = seconds - full * 60;
    return [...Array.from({ length: full }, () => 60), ...(rest >= 10 ? [rest] : [])];
  }
  const quarter = Math.max(5, Math.floor(seconds / 4));
  return Array.from({ length: Math.max(1, Math.floor(seconds / quarter)) }, () => quarter);
}

export async function soakBench(o: SoakOptions, log: (s: string) => void): Promise<SoakResult> {
  const dialect = o.databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL';
  const env = { WSOPS_DATABASE_URL: o.databaseUrl, WSOPS_SECRET: BENCH_SECRET, WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' };
  const services = await createServices(loadConfig(env));
  const rport = await freePort();
  const receiver = await startProcess(
    ['--import', 'tsx', 'bench/receiver-server.ts', String(rport)],
    {},
    `http://127.0.0.1:${rport}/stats`,
  );
  const stats = async () => (await (await fetch(`http://127.0.0.1:${rport}/stats`)).json()) as { count: number; p50: number; p99: number };
  let server: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    const now = Date.now();
    const ws = await createWorkspace(services.database.db, 'Soak', ['assets'], new Date(now).toISOString());
    log(`${dialect} soak: seeding ${o.records} assets`);
    await seedRegister(services, ws.id, 'assets', o.records, { seed: 'soak', now });
    const key = await assetsReadKey(services, ws.id, now);
    await createEndpoint(services, ws.id, { url: `http://127.0.0.1:${rport}/soak`, scopes: 'assets:read', events: 'asset.assigned' });

    const port = await freePort();
    const internalPort = await freePort();
    server = await startWsops(o.databaseUrl, port, {
      env: { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true', WSOPS_INTERNAL_PORT: String(internalPort) },
    });
    const pid = server.pid as number;
    const metrics = () => fetch(`http://127.0.0.1:${internalPort}/metrics`).then((r) => r.text());
    for (let i = 0; i < 600 && !/wsops_webhook_endpoints\{state="active"\} 1/.test(await metrics()); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }

    // Pages of 100 at random depths, from cursors collected by a walk (as in read benchmark (a)).
    const headers = { authorization: `Bearer ${key.key}` };
    const cursors: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/assets?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        headers,
      });
      const body = (await res.json()) as { next_cursor: string | null };
      cursor = body.next_cursor;
      if (cursor) cursors.push(cursor);
    } while (cursor && cursors.length < 2000);
    const paths = Array.from({ length: 2000 }, () => {
      const c = cursors[Math.floor(Math.random() * cursors.length)];
      return `/api/v1/assets?limit=100${c ? `&cursor=${encodeURIComponent(c)}` : ''}`;
    });

    const measureSeconds = Math.max(5, Math.min(10, Math.floor(o.seconds / 6)));
    log(`${dialect} soak: measuring the read maximum for ${measureSeconds} s`);
    const max = await load(`http://127.0.0.1:${port}`, headers, paths, 50, measureSeconds);
    const targetRps = Math.max(1, Math.round(max.rps * READ_SHARE));
    log(
      `${dialect} soak: read maximum ${Math.round(max.rps)} req/s; soaking at ${targetRps} req/s + ${EVENTS_PER_SECOND} events/s for ${o.seconds} s`,
    );

    const emitter = startEmitter(services, ws.id);
    const windows: SoakWindow[] = [];
    try {
      // A warm-up under the same load first: heaps and caches grow to their working size there,
      // so the drift measured afterwards is growth under steady load, not start-up.
      const warmUp = Math.min(60, Math.max(10, Math.floor(o.seconds / 4)));
      for (const [index, seconds] of [warmUp, ...windowsOf(o.seconds)].entries()) {
        const startedAt = performance.now();
        await fetch(`http://127.0.0.1:${rport}/reset`, { method: 'POST' });
        const emittedBefore = emitter.counts.emitted;
        const errorsBefore = emitter.counts.errors;
        const rss: number[] = [];
        const sampler = setInterval(() => rss.push(rssMb(pid)), 1000);
        let r: LoadResult;
        try {
          r = await load(`http://127.0.0.1:${port}`, headers, paths, 50, seconds, targetRps);
        } finally {
          clearInterval(sampler);
        }
        const s = await stats();
        const w: SoakWindow = {
          index,
          seconds,
          eventsPerSecond: (emitter.counts.emitted - emittedBefore) / ((performance.now() - startedAt) / 1000),
          readRps: r.rps,
          readP99: r.p99,
          readErrors: r.errors + r.non2xx,
          eventsEmitted: emitter.counts.emitted - emittedBefore,
          emitErrors: emitter.counts.errors - errorsBefore,
          webhookP99: s.p99,
          rssMb: rss.length ? rss.reduce((a, b) => a + b, 0) / rss.length : rssMb(pid),
        };
        windows.push(w);
        log(
          `  window ${w.index || 'warm-up'}: ${Math.round(w.readRps)} req/s p99 ${w.readP99} ms, errors ${w.readErrors + w.emitErrors}, webhook p99 ${w.webhookP99} ms, RSS ${w.rssMb.toFixed(0)} MB`,
        );
      }
    } finally {
      await emitter.stop();
    }

    // Every emitted event must arrive: wait for the queue to drain (bounded).
    const pendingOf = (text: string) => Number(/^wsops_delivery_jobs\{state="pending"\} (\d+)/m.exec(text)?.[1] ?? 'NaN');
    let text = await metrics();
    for (let i = 0; i < 600 && pendingOf(text) !== 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await metrics();
    }
    const failedAttempts = [...text.matchAll(/^wsops_delivery_attempts_total\{[^}]*outcome="failed"[^}]*\} (\d+)/gm)].reduce(
      (a, m) => a + Number(m[1]),
      0,
    );
    const undelivered = pendingOf(text);
    const measured = windows.filter((w) => w.index > 0);
    const errors =
      windows.reduce((a, w) => a + w.readErrors + w.emitErrors, 0) + failedAttempts + (Number.isNaN(undelivered) ? 1 : undelivered);
    const first = measured[0]?.rssMb ?? 0;
    const rssDrift = first > 0 ? Math.max(...measured.map((w) => Math.abs(w.rssMb - first) / first)) : 0;
    const ok = errors === 0 && rssDrift <= MAX_RSS_DRIFT;

    const lines = [
      `### Soak (${dialect}, ${o.seconds} s, ${o.records.toLocaleString('en')} assets)`,
      '',
      `Read maximum ${Math.round(max.rps).toLocaleString('en')} req/s (p99 ${max.p99} ms, ${measureSeconds} s); soak at ${targetRps.toLocaleString('en')} req/s (80%) + ${EVENTS_PER_SECOND} events/s.`,
      '',
      '| window | seconds | read req/s | read p99 ms | read errors | events/s | emit errors | webhook p99 ms | RSS MB |',
      '|---|---|---|---|---|---|---|---|---|',
      ...windows.map(
        (w) =>
          `| ${w.index || 'warm-up'} | ${w.seconds} | ${Math.round(w.readRps).toLocaleString('en')} | ${w.readP99} | ${w.readErrors} | ${Math.round(w.eventsPerSecond)} | ${w.emitErrors} | ${w.webhookP99} | ${w.rssMb.toFixed(0)} |`,
      ),
      '',
      `Failed delivery attempts ${failedAttempts}; undelivered after the run ${undelivered}; errors in total ${errors} (goal 0): ${errors === 0 ? 'met' : 'NOT met'}.`,
      `RSS drift from window 1 (after the warm-up): ${(rssDrift * 100).toFixed(1)}% (goal ≤ 10%): ${rssDrift <= MAX_RSS_DRIFT ? 'met' : 'NOT met'}.`,
    ];
    const table = lines.join('\n');
    process.stdout.write(`\n${table}\n`);
    return { readMaxRps: max.rps, targetRps, windows, failedAttempts, undelivered, errors, rssDrift, ok, table };
  } finally {
    if (server) await stopProcess(server);
    await stopProcess(receiver);
    await services.close();
  }
}
