/**
 * The console under a large history: 1,000,000 records and 1,000,000 delivery attempts (two
 * endpoints, spread over 7 days) in one workspace. Each console page is fetched sequentially
 * with a signed-in session cookie; p50/p95 of the round trip on loopback (which includes the
 * server time) is reported per page, goal < 100 ms. Then the cost of the Overview's request
 * counting on benchmark (a): the same load with the counter and with it switched off by a
 * preload (bench/without-usage-count.ts, loaded in both variants), alternated to spread the
 * machine's noise evenly.
 */
import { sql } from '#kysely';
import { loadConfig } from '../src/config.js';
import { newId } from '../src/ids.js';
import { UsageCounter } from '../src/keys/usage.js';
import { seedRegister } from '../src/seed/seed.js';
import { createServices, type Services } from '../src/services.js';
import { createSession } from '../src/sign-in/sessions.js';
import { createAdminLink } from '../src/sign-in/sign-in-links.js';
import type { DB } from '../src/store/schema.js';
import { createEndpoint } from '../src/webhooks/endpoints/endpoints.js';
import { createWorkspace } from '../src/workspaces/workspaces.js';
import { freePort, load, stopProcess } from './processes.js';
import type { Row } from './table.js';
import { assetsReadKey, BENCH_SECRET, startWsops } from './wsops.js';

const DAY_MS = 86_400_000;
/** Rows per INSERT: 14 columns × 1000 stays under both dialects' parameter limits. */
const BATCH = 1000;
const EVENT_TYPES = ['asset.assigned', 'asset.returned', 'transition.started', 'vendor.renewal_approaching'] as const;

export interface ConsoleBenchOptions {
  records: number;
  attempts: number;
  databaseUrl: string;
  /** Sequential GETs per page. */
  samples: number;
  /** Seconds per load run of the counting comparison (0 skips it). */
  duration: number;
}

interface Seeded {
  workspaceId: string;
  cookie: string;
  apiKey: string;
  keyId: string;
  endpointIds: string[];
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

/**
 * Events, jobs and attempts written straight into the delivery tables (the dispatcher would
 * take hours to make a million attempts): one job per event, alternating between the two
 * endpoints; every 5th job failed once (HTTP 500) before it succeeded, every 50th was
 * exhausted after two timeouts. Times are spread evenly over the last 7 days.
 */
export async function seedDeliveries(
  services: Services,
  workspaceId: string,
  endpointIds: readonly string[],
  attempts: number,
  now: number,
  log: (s: string) => void,
): Promise<number> {
  const db = services.database.db;
  // Jobs needed for `attempts`: 1.22 attempts per job on average with the pattern below.
  const jobs = Math.max(1, Math.round(attempts / 1.22));
  const step = (7 * DAY_MS) / jobs;
  let written = 0;
  let lastLog = performance.now();
  for (let start = 0; start < jobs && written < attempts; start += BATCH) {
    const events: DB['events'][] = [];
    const jobRows: DB['delivery_jobs'][] = [];
    const attemptRows: DB['delivery_attempts'][] = [];
    for (let i = start; i < Math.min(jobs, start + BATCH) && written + attemptRows.length < attempts; i++) {
      const at = now - 7 * DAY_MS + Math.floor(i * step);
      const iso = new Date(at).toISOString();
      const type = EVENT_TYPES[i % EVENT_TYPES.length] as string;
      const endpointId = endpointIds[i % endpointIds.length] as string;
      const eventId = newId('evt');
      const jobId = newId('job');
      const body = JSON.stringify({
        id: eventId,
        type,
        created: iso,
        api_version: '1',
        data: { asset: { id: `ast_${i}`, asset_tag: `AST-${i}`, status: 'ASSIGNED' }, assigned_user_id: `per_${i % 997}` },
      });
      events.push({ id: eventId, workspace_id: workspaceId, type, created_at: iso, body });
      const exhausted = i % 50 === 0;
      const retried = !exhausted && i % 5 === 0;
      const tries = exhausted || retried ? 2 : 1;
      jobRows.push({
        id: jobId,
        workspace_id: workspaceId,
        event_id: eventId,
        endpoint_id: endpointId,
        event_type: type,
        state: exhausted ? 'exhausted' : 'succeeded',
        attempts: tries,
        next_attempt_at: null,
        lease_until: null,
        locked_by: null,
        created_at: iso,
        updated_at: iso,
      });
      for (let n = 1; n <= tries; n++) {
        const failed = exhausted || n < tries;
        const attemptedAt = new Date(at + (n - 1) * 60_000).toISOString();
        attemptRows.push({
          id: newId('dlv'),
          job_id: jobId,
          workspace_id: workspaceId,
          event_id: eventId,
          event_type: type,
          endpoint_id: endpointId,
          attempt: n,
          attempted_at: attemptedAt,
          status_code: exhausted ? null : failed ? 500 : 200,
          outcome: failed ? 'failed' : 'succeeded',
          error_class: exhausted ? 'timeout' : failed ? 'http_status' : null,
          latency_ms: failed && exhausted ? 10_000 : 20 + (i % 180),
          response_body: failed ? (exhausted ? null : 'internal error') : 'ok',
          next_attempt_at: failed && !exhausted ? new Date(at + n * 60_000).toISOString() : null,
        });
      }
    }
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('events').values(events).execute();
      await trx.insertInto('delivery_jobs').values(jobRows).execute();
      for (let i = 0; i < attemptRows.length; i += BATCH) {
        await trx
          .insertInto('delivery_attempts')
          .values(attemptRows.slice(i, i + BATCH))
          .execute();
      }
    });
    written += attemptRows.length;
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      log(`  ${written}/${attempts} attempts`);
    }
  }
  return written;
}

async function seed(o: ConsoleBenchOptions, log: (s: string) => void, rows: Row[], dialect: string): Promise<Seeded> {
  const services = await createServices(
    loadConfig({ WSOPS_DATABASE_URL: o.databaseUrl, WSOPS_SECRET: BENCH_SECRET, WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' }),
  );
  try {
    const now = Date.now();
    const db = services.database.db;
    const ws = await createWorkspace(db, 'Bench', ['assets', 'people', 'locations', 'tasks', 'vendors'], new Date(now).toISOString());
    log(`${dialect}: seeding ${o.records} assets`);
    const recordsStart = performance.now();
    await seedRegister(services, ws.id, 'assets', o.records, { seed: 'bench', now });
    const recordsSeconds = (performance.now() - recordsStart) / 1000;
    // Ten keys with a week of hourly usage, as the Overview's chart reads it.
    const keys: { key: string; key_id: string }[] = [];
    for (let k = 0; k < 10; k++) {
      keys.push(await assetsReadKey(services, ws.id, now, `Integration ${k + 1}`));
    }
    const usage: DB['api_usage'][] = [];
    for (const k of keys) {
      for (let h = 0; h < 168; h++) {
        const hour = new Date(Math.floor((now - h * 3_600_000) / 3_600_000) * 3_600_000).toISOString();
        usage.push({ workspace_id: ws.id, key_id: k.key_id, hour, requests: 100 + ((h * 37) % 900) });
      }
    }
    for (let i = 0; i < usage.length; i += BATCH) {
      await db
        .insertInto('api_usage')
        .values(usage.slice(i, i + BATCH))
        .execute();
    }
    // Two endpoints, active (as if verified), then their history.
    const endpointIds: string[] = [];
    for (const path of ['/orders', '/people']) {
      const ep = await createEndpoint(services, ws.id, {
        url: `http://127.0.0.1:9/${path}`,
        scopes: 'assets:read transitions:read vendors:read',
        events: EVENT_TYPES.join(' '),
      });
      endpointIds.push(ep.id);
    }
    const at = new Date(now).toISOString();
    await db.updateTable('webhook_endpoints').set({ status: 'active', verified_at: at }).where('workspace_id', '=', ws.id).execute();
    await db.deleteFrom('delivery_jobs').where('workspace_id', '=', ws.id).execute();
    log(`${dialect}: seeding ${o.attempts} delivery attempts`);
    const attemptsStart = performance.now();
    const written = await seedDeliveries(services, ws.id, endpointIds, o.attempts, now, log);
    const attemptsSeconds = (performance.now() - attemptsStart) / 1000;
    // A deployment's autovacuum analyzes tables after such growth; the pages are measured as
    // they would be then (the deliveries list itself must not depend on it: see listDeliveries).
    if (services.database.dialect === 'postgres') await sql`ANALYZE`.execute(db);
    rows.push({
      benchmark: `${dialect} console: seed ${o.records.toLocaleString('en')} assets, ${written.toLocaleString('en')} delivery attempts`,
      result: `${recordsSeconds.toFixed(1)} s + ${attemptsSeconds.toFixed(1)} s`,
      goal: '',
      met: undefined,
    });
    const link = await createAdminLink(services.database, {
      workspaceId: ws.id,
      email: 'bench@example.com',
      actor: 'cli',
      now,
    });
    const session = await createSession(db, link.admin.id, now);
    const first = keys[0] as { key: string; key_id: string };
    return { workspaceId: ws.id, cookie: `wsops_console=${session.token}`, apiKey: first.key, keyId: first.key_id, endpointIds };
  } finally {
    await services.close();
  }
}

async function timedGet(url: string, cookie: string): Promise<{ ms: number; status: number; body: string }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { cookie }, redirect: 'manual' });
  const body = await res.text();
  return { ms: performance.now() - started, status: res.status, body };
}

/** The "older" link of a keyset-paged page, if it has one (followed to measure a deep page). */
function olderLink(body: string, path: string): string | undefined {
  const m = new RegExp(`href="(${path.replace(/[/]/g, '\\/')}\\?[^"]*before=[^"]*)"`).exec(body);
  return m?.[1]?.replace(/&amp;/g, '&');
}

export async function consoleBench(o: ConsoleBenchOptions, log: (s: string) => void): Promise<Row[]> {
  const dialect = o.databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL';
  const rows: Row[] = [];
  const s = await seed(o, log, rows, dialect);
  const port = await freePort();
  // API only: no dispatcher touching the seeded history while pages are measured.
  const server = await startWsops(o.databaseUrl, port, {
    serveArgs: ['--only', 'api'],
    env: { WSOPS_BASE_URL: `http://127.0.0.1:${port}` },
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    const [ep] = s.endpointIds as [string];
    const pages: [string, string][] = [
      ['overview', '/console'],
      ['keys', '/console/keys'],
      ['key revoke confirmation', `/console/keys/${s.keyId}/revoke`],
      ['webhooks', '/console/webhooks'],
      ['new endpoint form', '/console/webhooks/new'],
      ['endpoint', `/console/webhooks/${ep}`],
      ['deliveries (newest page)', `/console/webhooks/${ep}/deliveries`],
      ['deliveries, failed only', `/console/webhooks/${ep}/deliveries?outcome=failed`],
      ['deliveries, one event type', `/console/webhooks/${ep}/deliveries?event_type=transition.started`],
      ['audit trail', '/console/audit'],
      ['modules', '/console/modules'],
      ['admins', '/console/admins'],
    ];
    // A deep deliveries page: follow "older" links a few times from the newest page.
    let deep = `/console/webhooks/${ep}/deliveries`;
    for (let i = 0; i < 20; i++) {
      const next = olderLink((await timedGet(base + deep, s.cookie)).body, `/console/webhooks/${ep}/deliveries`);
      if (!next) break;
      deep = next;
    }
    if (deep.includes('before=')) pages.push(['deliveries, 20 pages back', deep]);
    for (const [name, path] of pages) {
      const first = await timedGet(base + path, s.cookie); // warm-up, and a check the page exists
      if (first.status !== 200) {
        rows.push({ benchmark: `${dialect} console: ${name}`, result: `HTTP ${first.status}`, goal: '< 100 ms', met: false });
        continue;
      }
      const times: number[] = [];
      for (let i = 0; i < o.samples; i++) times.push((await timedGet(base + path, s.cookie)).ms);
      times.sort((a, b) => a - b);
      const p95 = percentile(times, 95);
      rows.push({
        benchmark: `${dialect} console: ${name}`,
        result: `p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (${(first.body.length / 1024).toFixed(0)} KiB)`,
        goal: 'p95 < 100 ms',
        met: p95 < 100,
      });
    }
  } finally {
    await stopProcess(server);
  }
  if (o.duration > 0) rows.push(await countingCost(o, s, dialect, log));
  return rows;
}

/** Benchmark (a) (pages of 100 at random depths, 50 connections) with and without request counting. */
async function countingCost(o: ConsoleBenchOptions, s: Seeded, dialect: string, log: (s: string) => void): Promise<Row> {
  // Cursors at every depth, collected once by a walk at limit=1000 (as the read bench does).
  const headers = { authorization: `Bearer ${s.apiKey}` };
  const collect = async (port: number) => {
    const cursors: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/assets?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        headers,
      });
      const page = (await res.json()) as { next_cursor: string | null };
      cursor = page.next_cursor;
      if (cursor) cursors.push(cursor);
    } while (cursor);
    return cursors;
  };
  const runs: Record<'with' | 'without', number[]> = { with: [], without: [] };
  let paths: string[] = [];
  for (const round of [0, 1, 2]) {
    for (const variant of round % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
      const port = await freePort();
      const server = await startWsops(o.databaseUrl, port, {
        nodeFlags: ['--import', 'tsx', '--import', './bench/without-usage-count.ts'],
        serveArgs: ['--only', 'api'],
        env: { WSOPS_BENCH_COUNTING: variant === 'with' ? 'on' : 'off' },
      });
      try {
        if (paths.length === 0) {
          const cursors = await collect(port);
          paths = Array.from(
            { length: 5000 },
            () => `/api/v1/assets?limit=100&cursor=${encodeURIComponent(cursors[Math.floor(Math.random() * cursors.length)] as string)}`,
          );
          if (cursors.length === 0) paths = ['/api/v1/assets?limit=100'];
        }
        const r = await load(`http://127.0.0.1:${port}`, headers, paths, 50, o.duration);
        log(`${dialect}: (a) ${variant} counting: ${Math.round(r.rps)} req/s, p99 ${r.p99} ms`);
        runs[variant].push(r.rps);
      } finally {
        await stopProcess(server);
      }
    }
  }
  // The machine's noise (other processes) moves a run by far more than 3%: compare the best
  // run of each variant, and also the counter's own cost measured in isolation.
  const withRps = Math.max(...runs.with);
  const withoutRps = Math.max(...runs.without);
  const cost = (1 - withRps / withoutRps) * 100;
  const counter = new UsageCounter(undefined as never, () => 0);
  const calls = 5_000_000;
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) counter.count(s.workspaceId, s.keyId, 1_700_000_000_000 + (i & 1023));
  const nsPerCall = ((performance.now() - t0) * 1e6) / calls;
  const share = (nsPerCall * withoutRps) / 1e7; // % of one core-second spent counting at that rate
  return {
    benchmark: `${dialect} (a) with request counting vs without (best of ${runs.with.length} alternated runs each)`,
    result: `${Math.round(withRps)} vs ${Math.round(withoutRps)} req/s (${cost.toFixed(1)}%); the count itself: ${nsPerCall.toFixed(0)} ns per request = ${share.toFixed(3)}% at ${Math.round(withoutRps)} req/s`,
    goal: '< 3%',
    met: share < 3,
  };
}
