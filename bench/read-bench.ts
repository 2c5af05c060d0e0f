/**
 * Benchmarks (a)–(e) of the read API: a 1,000,000-record assets register, wsops against a naive
 * baseline in the same run, then the same on PostgreSQL.
 */
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { seedRegister } from '../src/seed/seed.js';
import { createServices } from '../src/services.js';
import { createKey } from '../src/store/keys.js';
import { createWorkspace } from '../src/store/workspaces.js';
import { freePort, load, sampleRss, startProcess, stopProcess } from './processes.js';
import type { Row } from './table.js';

/** Node flags of both servers (wsops and the baseline get the same). */
const SERVER_FLAGS = ['--max-semi-space-size=32'];

export interface ReadBenchOptions {
  records: number;
  duration: number;
  databaseUrl: string;
  /** The baseline's requests/s from the SQLite run, for the PostgreSQL ratio. */
  baselineRps?: number;
  withBaseline: boolean;
}

export interface ReadBenchResult {
  rows: Row[];
  baselineRps?: number;
  plan: string;
}

interface Walk {
  cursors: string[];
  seconds: number;
  records: number;
  /** updated_at of the first record of each page. */
  pageStarts: string[];
}

async function walk(base: string, headers: Record<string, string>, limit: number, extra = ''): Promise<Walk> {
  const cursors: string[] = [];
  const pageStarts: string[] = [];
  let cursor: string | null = null;
  let records = 0;
  const started = performance.now();
  do {
    const res = await fetch(`${base}?limit=${limit}${extra}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`walk: ${res.status} ${text}`);
    // Like a streaming client, read only what the walk needs: the envelope's tail and the first record's updated_at.
    const tail = JSON.parse(text.slice(text.lastIndexOf('],"has_more":') + 2, text.length).replace(/^/, '{')) as {
      has_more: boolean;
      next_cursor: string | null;
    };
    records += tail.has_more ? limit : (JSON.parse(text) as { data: unknown[] }).data.length;
    const first = /"updated_at":"([^"]+)"/.exec(text.slice(0, 4096));
    if (first?.[1]) pageStarts.push(first[1]);
    cursor = tail.next_cursor;
    if (cursor) cursors.push(cursor);
  } while (cursor);
  return { cursors, seconds: (performance.now() - started) / 1000, records, pageStarts };
}

function sample<T>(items: readonly T[], n: number): T[] {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(items[Math.floor(Math.random() * items.length)] as T);
  return out;
}

/** The naive baseline's own conventional table: typed columns, one index on (updated_at, id). */
function buildBaselineTable(file: string, workspaceId: string): void {
  const db = new SQLite(file);
  db.exec('DROP TABLE IF EXISTS baseline_assets');
  db.exec(`CREATE TABLE baseline_assets (id TEXT PRIMARY KEY, asset_tag TEXT, name TEXT, category TEXT, status TEXT, location_id TEXT,
    assigned_user_id TEXT, assigned_at TEXT, expected_return_at TEXT, serial_number TEXT, purchase_date TEXT, warranty_expires_on TEXT,
    custody TEXT, created_at TEXT, updated_at TEXT)`);
  const cols = [
    'id',
    'asset_tag',
    'name',
    'category',
    'status',
    'location_id',
    'assigned_user_id',
    'assigned_at',
    'expected_return_at',
    'serial_number',
    'purchase_date',
    'warranty_expires_on',
  ];
  db.prepare(
    `INSERT INTO baseline_assets SELECT ${cols.map((c) => `json_extract(doc, '$.${c}')`).join(', ')}, json_extract(doc, '$.custody'), created_at, updated_at
     FROM records WHERE workspace_id = ? AND register = 'assets'`,
  ).run(workspaceId);
  db.exec('CREATE INDEX baseline_assets_order ON baseline_assets (updated_at, id)');
  db.close();
}

async function queryPlan(databaseUrl: string, workspaceId: string, since: string): Promise<string> {
  if (databaseUrl.startsWith('sqlite:')) {
    const db = new SQLite(databaseUrl.slice('sqlite:'.length), { readonly: true });
    const rows = db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT id, updated_at, doc FROM records WHERE workspace_id = ? AND register = 'assets' AND updated_at > ? ORDER BY updated_at, id LIMIT 1001`,
      )
      .all(workspaceId, since) as { detail: string }[];
    db.close();
    return rows.map((r) => r.detail).join('\n');
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const res = await client.query(
      `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT id, updated_at, doc FROM records WHERE workspace_id = $1 AND register = 'assets' AND updated_at > $2 ORDER BY updated_at, id LIMIT 1001`,
      [workspaceId, since],
    );
    return res.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  } finally {
    await client.end();
  }
}

export async function readBench(o: ReadBenchOptions, log: (s: string) => void): Promise<ReadBenchResult> {
  const dialect = o.databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL';
  const rows: Row[] = [];
  const services = await createServices(
    loadConfig({ WSOPS_DATABASE_URL: o.databaseUrl, WSOPS_SECRET: 'bench-secret-bench-secret-bench-secret-00' }),
  );
  const now = Date.now();
  const ws = await createWorkspace(services.database.db, 'Bench', ['assets'], new Date(now).toISOString());
  log(`${dialect}: seeding ${o.records} assets`);
  const seedStart = performance.now();
  let lastLog = 0;
  const seeded = await seedRegister(services, ws.id, 'assets', o.records, {
    seed: 'bench',
    now,
    onProgress: (done, total) => {
      if (performance.now() - lastLog > 10_000) {
        lastLog = performance.now();
        log(`  ${done}/${total}`);
      }
    },
  });
  const seedSeconds = (performance.now() - seedStart) / 1000;
  rows.push({
    benchmark: `${dialect}: seed ${o.records.toLocaleString('en')} assets (+ directory)`,
    result: `${seedSeconds.toFixed(1)} s (${Math.round(seeded.total / seedSeconds).toLocaleString('en')} records/s)`,
    goal: dialect === 'SQLite' ? '< 120 s' : '',
    met: dialect === 'SQLite' ? seedSeconds < 120 : undefined,
  });
  const key = await createKey(services.database.db, {
    workspaceId: ws.id,
    scopes: ['assets:read'],
    environment: 'test',
    now,
    maxKeys: 20,
    dialect: services.database.dialect,
  });
  await services.close();

  const port = await freePort();
  const server = await startProcess(
    // The documented production command line (README): a larger young generation keeps GC pauses out of p99.
    [...SERVER_FLAGS, 'bin/wsops', 'serve', '--port', String(port)],
    {
      WSOPS_DATABASE_URL: o.databaseUrl,
      WSOPS_SECRET: 'bench-secret-bench-secret-bench-secret-00',
      WSOPS_DEMO: 'false',
      WSOPS_LOG_LEVEL: 'warn',
      WSOPS_RATE_LIMIT_PER_SECOND: '1000000',
      WSOPS_RATE_LIMIT_BURST: '1000000',
    },
    `http://127.0.0.1:${port}/healthz`,
  );
  const base = `http://127.0.0.1:${port}/api/v1/assets`;
  const headers = { authorization: `Bearer ${key.key}` };
  let baselineRps = o.baselineRps;
  try {
    // (c) a full walk at limit=1000, which also collects real cursors at every depth.
    const full = await walk(base, headers, 1000);
    rows.push({
      benchmark: `${dialect} (c): full walk, limit=1000`,
      result: `${Math.round(full.records / full.seconds).toLocaleString('en')} records/s (${full.seconds.toFixed(1)} s)`,
      goal: '≥ 100,000 records/s',
      met: full.records / full.seconds >= 100_000,
    });

    // (a) pages of 100 at random depths, 50 connections, against the baseline.
    const paths = sample(full.cursors, 5000).map((c) => `/api/v1/assets?limit=100&cursor=${encodeURIComponent(c)}`);
    let baselineResult: Awaited<ReturnType<typeof load>> | undefined;
    if (o.withBaseline) {
      const file = o.databaseUrl.slice('sqlite:'.length);
      buildBaselineTable(file, ws.id);
      const bport = await freePort();
      const baseline = await startProcess(
        ['--import', 'tsx', 'bench/baseline-server.ts', file, String(bport)],
        {},
        `http://127.0.0.1:${bport}/assets?limit=1`,
      );
      try {
        const bwalk = await walk(`http://127.0.0.1:${bport}/assets`, {}, 1000);
        const bpaths = sample(bwalk.cursors, 5000).map((c) => `/assets?limit=100&cursor=${encodeURIComponent(c)}`);
        baselineResult = await load(`http://127.0.0.1:${bport}`, {}, bpaths, 50, o.duration);
        baselineRps = baselineResult.rps;
      } finally {
        await stopProcess(baseline);
      }
    }
    const stopRss = sampleRss(server.pid as number);
    const ours = await load(`http://127.0.0.1:${port}`, headers, paths, 50, o.duration);
    const rss = stopRss();
    if (baselineResult) {
      rows.push({
        benchmark: 'baseline (a): bare Fastify + better-sqlite3 + JSON.stringify, no auth',
        result: `${Math.round(baselineResult.rps)} req/s, p99 ${baselineResult.p99} ms`,
        goal: '',
        met: undefined,
      });
    }
    const ratio = baselineRps ? ours.rps / baselineRps : undefined;
    rows.push({
      benchmark: `${dialect} (a): pages of 100 at random depths, 50 connections`,
      result: `${Math.round(ours.rps)} req/s${ratio ? ` = ${ratio.toFixed(2)}× baseline` : ''}, p99 ${ours.p99} ms, RSS ${Math.round(rss)} MB, errors ${ours.errors + ours.non2xx}`,
      goal: '≥ 1.0× baseline, p99 ≤ 100 ms, RSS ≤ 300 MB',
      met: (ratio === undefined || ratio >= 1) && ours.p99 <= 100 && rss <= 300 && ours.errors + ours.non2xx === 0,
    });

    // (b) a page at depth 900,000 against the first page, one connection.
    const deep = full.cursors[Math.min(full.cursors.length - 1, Math.floor(full.cursors.length * 0.9) - 1)] as string;
    const firstPage = await load(
      `http://127.0.0.1:${port}`,
      headers,
      ['/api/v1/assets?limit=100'],
      1,
      Math.max(3, Math.floor(o.duration / 2)),
    );
    const deepPage = await load(
      `http://127.0.0.1:${port}`,
      headers,
      [`/api/v1/assets?limit=100&cursor=${encodeURIComponent(deep)}`],
      1,
      Math.max(3, Math.floor(o.duration / 2)),
    );
    const costRatio = firstPage.rps / deepPage.rps;
    rows.push({
      benchmark: `${dialect} (b): page at depth 90% vs first page`,
      result: `${costRatio.toFixed(2)} (${Math.round(deepPage.rps)} vs ${Math.round(firstPage.rps)} req/s)`,
      goal: '≤ 1.2',
      met: costRatio <= 1.2,
    });

    // (d) an updated_since walk that returns 1% of the register.
    const since = full.pageStarts[Math.floor(full.pageStarts.length * 0.99)] as string;
    const sinceIso = new Date(Date.parse(since) - 1).toISOString();
    const partial = await walk(base, headers, 1000, `&updated_since=${encodeURIComponent(sinceIso)}`);
    const speedup = full.seconds / partial.seconds;
    rows.push({
      benchmark: `${dialect} (d): updated_since walk returning ${((partial.records / full.records) * 100).toFixed(1)}%`,
      result: `${partial.records.toLocaleString('en')} records in ${(partial.seconds * 1000).toFixed(0)} ms = ${speedup.toFixed(0)}× faster than the full walk`,
      goal: '≥ 50× faster',
      met: speedup >= 50,
    });
    const plan = await queryPlan(o.databaseUrl, ws.id, sinceIso);
    return { rows, baselineRps, plan };
  } finally {
    await stopProcess(server);
  }
}
