/**
 * The events API's pages through HTTP (issue 58): one workspace holding 1,000,000 assets and
 * 1,000,000 events, one key that reads both, and a page of 100 events (the first, at random
 * depths through real cursors, with a `types` filter, with a `since` filter) measured against a
 * page of 100 assets (the first, at random depths), in alternating rounds of the same load: the
 * same connections and the same number of requests for each, p50/p95 and requests/s.
 *
 * Events are seeded by the fastest path, straight into the `events` table (bodies made by the
 * catalogue's own builders); the pages are read from a real `wsops serve` with a real key.
 */
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { newId } from '../src/ids.js';
import { createKey } from '../src/keys/keys.js';
import { seedRegister } from '../src/seed/seed.js';
import { createServices } from '../src/services.js';
import { EVENT_TYPES, type EventType, eventData } from '../src/webhooks/events/event-types.js';
import { createWorkspace, parseModules } from '../src/workspaces/workspaces.js';
import { freePort, type LoadResult, load, loadRequests, stopProcess } from './processes.js';
import type { Row } from './table.js';
import { walk } from './walk.js';
import { BENCH_SECRET, startWsops } from './wsops.js';

/** Connections of every counted run, records' and events' alike. */
const CONNECTIONS = 50;
/** Requests of every counted run. */
const REQUESTS = 10_000;
/** Uncounted load before each counted run: the other side ran just before. */
const WARM_UP_SECONDS = 2;
/** Alternating rounds of every kind of page. */
const ROUNDS = 2;
/** Events are spread evenly over this many days before the run (inside the 30 days' retention). */
const SPAN_DAYS = 20;
/** Rows per INSERT while seeding events. */
const BATCH = 5000;
/** The `types` filter of the filtered rows: one type of the eight, an eighth of the events. */
const FILTER_TYPE = 'asset.returned';
const GOAL = 1.5;

export interface EventsBenchOptions {
  databaseUrl: string;
  dialect: string;
  records: number;
  events: number;
}

export interface EventsBenchResult {
  rows: Row[];
  plan: string;
}

const TYPES = Object.keys(EVENT_TYPES) as EventType[];

/** A plausible `data` of each type, cut by the catalogue's builders as the outbox's events are. */
function eventBody(id: string, type: EventType, i: number, created: string): string {
  const person = `per_${String(i % 997).padStart(16, '0')}`;
  const ref = (prefix: string, status: string) => ({ id: `${prefix}_${String(i).padStart(16, '0')}`, status });
  let data: unknown;
  switch (type) {
    case 'asset.assigned':
      data = eventData.assetAssigned({ ...ref('ast', 'ASSIGNED'), asset_tag: `AST-${i}`, assigned_user_id: person });
      break;
    case 'asset.returned':
      data = eventData.assetReturned({ ...ref('ast', 'IN_STOCK'), asset_tag: `AST-${i}` }, person, created);
      break;
    case 'vendor.renewal_approaching':
      data = eventData.vendorRenewal({ ...ref('ven', 'ACTIVE'), name: `Vendor ${i}` });
      break;
    case 'purchase_request.decided':
      data = eventData.purchaseRequestDecided(ref('prq', 'APPROVED'));
      break;
    case 'handover.acknowledged':
      data = eventData.handoverAcknowledged(ref('hnd', 'ACKNOWLEDGED'));
      break;
    case 'transition.started':
    case 'transition.completed':
      data = eventData.transition(type, { ...ref('trn', 'IN_PROGRESS'), kind: 'onboarding', person_id: person, started_at: created });
      break;
    case 'learning.acknowledged':
      data = eventData.learningAcknowledged(ref('lra', 'ACKNOWLEDGED'));
      break;
  }
  return JSON.stringify({ id, type, created, api_version: '1', data });
}

/** `count` events of the workspace, the eight types in turn, evenly over SPAN_DAYS ending a minute ago. */
export async function seedEvents(databaseUrl: string, workspaceId: string, count: number, now: number): Promise<string[]> {
  const start = now - 60_000 - SPAN_DAYS * 86_400_000;
  const step = (SPAN_DAYS * 86_400_000) / count;
  const createdAt: string[] = [];
  const batch = (from: number): [string, string, string, string, string][] => {
    const rows: [string, string, string, string, string][] = [];
    for (let i = from; i < Math.min(count, from + BATCH); i++) {
      const id = newId('evt');
      const type = TYPES[i % TYPES.length] as EventType;
      const created = new Date(start + Math.floor(i * step)).toISOString();
      createdAt.push(created);
      rows.push([id, workspaceId, type, created, eventBody(id, type, i, created)]);
    }
    return rows;
  };
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SQLite(databaseUrl.slice('sqlite:'.length));
    const insert = db.prepare('INSERT INTO events (id, workspace_id, type, created_at, body) VALUES (?, ?, ?, ?, ?)');
    const many = db.transaction((rows: string[][]) => {
      for (const r of rows) insert.run(r);
    });
    for (let from = 0; from < count; from += BATCH) many(batch(from));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.exec('ANALYZE');
    db.close();
    return createdAt;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (let from = 0; from < count; from += BATCH) {
      const rows = batch(from);
      await client.query(
        'INSERT INTO events (id, workspace_id, type, created_at, body) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])',
        [0, 1, 2, 3, 4].map((c) => rows.map((r) => r[c])),
      );
    }
    // Statistics and the visibility map as a maintained database has them, both tables.
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
  return createdAt;
}

const EVENTS_SQL = (dialectParam: (n: number) => string, filtered: boolean) =>
  `SELECT id, created_at, body FROM events WHERE workspace_id = ${dialectParam(1)} AND type IN (${
    filtered ? dialectParam(2) : TYPES.map((_, i) => dialectParam(i + 2)).join(', ')
  }) AND created_at >= ${dialectParam(filtered ? 3 : TYPES.length + 2)} ORDER BY created_at, id LIMIT 101`;

/** The plans of a page at the middle of the events, unfiltered and with the `types` filter. */
async function queryPlans(databaseUrl: string, workspaceId: string, middle: string): Promise<string> {
  const out: string[] = [];
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SQLite(databaseUrl.slice('sqlite:'.length), { readonly: true });
    for (const filtered of [false, true]) {
      const rows = db
        .prepare(`EXPLAIN QUERY PLAN ${EVENTS_SQL(() => '?', filtered)}`)
        .all(workspaceId, ...(filtered ? [FILTER_TYPE] : TYPES), middle) as { detail: string }[];
      out.push(`${filtered ? `types=${FILTER_TYPE}` : 'every type'}:`, ...rows.map((r) => r.detail));
    }
    db.close();
    return out.join('\n');
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const filtered of [false, true]) {
      const res = await client.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${EVENTS_SQL((n) => `$${n}`, filtered)}`, [
        workspaceId,
        ...(filtered ? [FILTER_TYPE] : TYPES),
        middle,
      ]);
      out.push(
        `${filtered ? `types=${FILTER_TYPE}` : 'every type'}:`,
        ...res.rows.map((r: Record<string, string>) => r['QUERY PLAN'] as string),
      );
    }
    return out.join('\n');
  } finally {
    await client.end();
  }
}

function sample<T>(items: readonly T[], n: number): T[] {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(items[Math.floor(Math.random() * items.length)] as T);
  return out;
}

/** Several runs as one: requests/s averaged, the worst p50 and p95, errors summed. */
function combine(runs: readonly LoadResult[]): LoadResult {
  const sum = (f: (r: LoadResult) => number) => runs.reduce((a, r) => a + f(r), 0);
  return {
    rps: sum((r) => r.rps) / runs.length,
    p50: Math.max(...runs.map((r) => r.p50)),
    p95: Math.max(...runs.map((r) => r.p95 ?? 0)),
    p99: Math.max(...runs.map((r) => r.p99)),
    errors: sum((r) => r.errors),
    non2xx: sum((r) => r.non2xx),
    total: sum((r) => r.total),
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en');
const errorsOf = (r: LoadResult) => r.errors + r.non2xx;
const figures = (r: LoadResult, bytes: number) =>
  `${fmt(r.rps)} req/s, p50 ${r.p50} ms, p95 ${Math.round(r.p95 ?? 0)} ms, ${(bytes / 1024).toFixed(1)} KiB a page`;

export async function eventsBench(o: EventsBenchOptions, log: (s: string) => void): Promise<EventsBenchResult> {
  const services = await createServices(loadConfig({ WSOPS_DATABASE_URL: o.databaseUrl, WSOPS_SECRET: BENCH_SECRET }));
  const now = Date.now();
  const ws = await createWorkspace(services.database.db, 'Events bench', parseModules('all'), new Date(now).toISOString());
  log(`${o.dialect}: seeding ${o.records} assets`);
  const assetsStart = performance.now();
  await seedRegister(services, ws.id, 'assets', o.records, { seed: 'events-bench', now });
  log(`${o.dialect}: assets seeded in ${((performance.now() - assetsStart) / 1000).toFixed(1)} s`);
  // One key for both sides: it reads the assets and sees every event type.
  const scopes = [...new Set(TYPES.map((t) => EVENT_TYPES[t].scope))];
  if (!scopes.includes('assets:read')) scopes.push('assets:read');
  const { key } = await createKey(services.database, { workspaceId: ws.id, scopes, environment: 'test', now, maxKeys: 20 });
  await services.close();
  log(`${o.dialect}: seeding ${o.events} events`);
  const seedStart = performance.now();
  const createdAt = await seedEvents(o.databaseUrl, ws.id, o.events, now);
  log(`${o.dialect}: events seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
  const since = createdAt[Math.floor(createdAt.length / 2)] as string;

  const port = await freePort();
  const server = await startWsops(o.databaseUrl, port);
  const origin = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${key}` };
  const rows: Row[] = [];
  try {
    // Real cursors at every depth, from a walk of each list under its filters (a cursor is bound to them).
    log(`${o.dialect}: walks for cursors`);
    const assets = await walk(`${origin}/api/v1/assets`, headers, 1000);
    const events = await walk(`${origin}/api/v1/events`, headers, 1000);
    const typed = await walk(`${origin}/api/v1/events`, headers, 1000, `&types=${FILTER_TYPE}`);
    const recent = await walk(`${origin}/api/v1/events`, headers, 1000, `&since=${encodeURIComponent(since)}`);
    const expected = [
      ['assets', assets.records, o.records],
      ['events', events.records, o.events],
      [`events of type ${FILTER_TYPE}`, typed.records, Math.ceil((o.events - TYPES.indexOf(FILTER_TYPE)) / TYPES.length)],
      ['events since the middle', recent.records, o.events - Math.floor(o.events / 2)],
    ] as const;
    for (const [what, got, want] of expected) {
      if (got !== want) throw new Error(`the walk of ${what} read ${got}, not ${want}`);
    }
    const deep = (list: string, cursors: string[], extra = '') =>
      sample(cursors, 5000).map((c) => `/api/v1/${list}?limit=100${extra}&cursor=${encodeURIComponent(c)}`);
    const typesParam = `&types=${FILTER_TYPE}`;
    const sinceParam = `&since=${encodeURIComponent(since)}`;
    const kinds = {
      assetsFirst: ['/api/v1/assets?limit=100'],
      eventsFirst: ['/api/v1/events?limit=100'],
      assetsDeep: deep('assets', assets.cursors),
      eventsDeep: deep('events', events.cursors),
      // The filtered kinds: the filter's first page among its pages at random depths.
      eventsTypes: [`/api/v1/events?limit=100${typesParam}`, ...deep('events', typed.cursors, typesParam)],
      eventsSince: [`/api/v1/events?limit=100${sinceParam}`, ...deep('events', recent.cursors, sinceParam)],
    };
    type Kind = keyof typeof kinds;
    // What a page weighs as sent (no Accept-Encoding, as the load sends none): events and assets
    // carry bodies of different sizes, a cost of the answer and not of the query.
    const bytes = Object.fromEntries(
      await Promise.all(
        (Object.keys(kinds) as Kind[]).map(async (k) => {
          const res = await fetch(`${origin}${kinds[k][kinds[k].length - 1]}`, { headers });
          return [k, (await res.arrayBuffer()).byteLength] as const;
        }),
      ),
    ) as Record<Kind, number>;
    const runs = Object.fromEntries(Object.keys(kinds).map((k) => [k, [] as LoadResult[]])) as Record<Kind, LoadResult[]>;
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of Object.keys(kinds) as Kind[]) {
        log(`${o.dialect}: round ${round + 1}, ${kind}`);
        await load(origin, headers, kinds[kind], CONNECTIONS, WARM_UP_SECONDS);
        runs[kind].push(await loadRequests(origin, headers, kinds[kind], CONNECTIONS, REQUESTS));
      }
    }
    const r = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, combine(v)])) as Record<Kind, LoadResult>;
    const load_ = `${CONNECTIONS} connections, ${fmt(REQUESTS)} requests × ${ROUNDS} rounds`;
    rows.push({
      benchmark: `${o.dialect}: assets, first page of 100 (${load_})`,
      result: `${figures(r.assetsFirst, bytes.assetsFirst)}, errors ${errorsOf(r.assetsFirst)}`,
      goal: '',
      met: undefined,
    });
    rows.push({
      benchmark: `${o.dialect}: assets, pages of 100 at random depths`,
      result: `${figures(r.assetsDeep, bytes.assetsDeep)}, errors ${errorsOf(r.assetsDeep)}`,
      goal: '',
      met: undefined,
    });
    const compare = (what: string, kind: Kind, base: LoadResult, baseName: string) => {
      const ours = r[kind];
      const slower = base.rps / ours.rps;
      const p95 = (ours.p95 ?? 0) / Math.max(1, base.p95 ?? 0);
      rows.push({
        benchmark: `${o.dialect}: events, ${what}`,
        result: `${figures(ours, bytes[kind])}: ${slower.toFixed(2)}× the time of ${baseName} by req/s, p95 ${p95.toFixed(2)}×, errors ${errorsOf(ours)}`,
        goal: `≤ ${GOAL}× the assets' page`,
        met: slower <= GOAL && p95 <= GOAL && errorsOf(ours) === 0,
      });
    };
    compare('first page of 100', 'eventsFirst', r.assetsFirst, "the assets' first page");
    compare('pages of 100 at random depths (cursor)', 'eventsDeep', r.assetsDeep, "assets' pages at random depths");
    compare(
      `types=${FILTER_TYPE} (1/8), first page and pages at random depths`,
      'eventsTypes',
      r.assetsDeep,
      "assets' pages at random depths",
    );
    compare('since the middle, first page and pages at random depths', 'eventsSince', r.assetsDeep, "assets' pages at random depths");
    for (const row of rows) log(`${row.benchmark}: ${row.result}`);
    const plan = await queryPlans(o.databaseUrl, ws.id, since);
    return { rows, plan };
  } finally {
    await stopProcess(server);
  }
}
