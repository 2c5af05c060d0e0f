/**
 * A/B of each read-path mechanism against its plain alternative (issue 41, part 4), in one run
 * on one seeded database: wsops as it is (A) and one server per plain alternative (the
 * temporary AB_PLAIN switch), loaded in turn round after round (A, B1, B2, …, then again), with
 * the naive baseline and the bare route in the same rounds, so a drift of the shared machine
 * lands on every side. Reports req/s, p99 and the server's CPU per request (from /proc).
 *   node --import tsx bench/mechanism-ab.ts <sqlite|postgres> [--records N] [--rounds R] [--duration S]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { seedRegister } from '../src/seed/seed.js';
import { createServices } from '../src/services.js';
import { createWorkspace } from '../src/store/workspaces.js';
import { buildPostgresBaselineTable, buildSqliteBaselineTable, settleBulkLoad } from './baseline-tables.js';
import { cpuSeconds, freePort, type LoadResult, load, startProcess, stopProcess } from './processes.js';
import { walk } from './walk.js';
import { assetsReadKey, BENCH_SECRET, SERVER_FLAGS, startWsops } from './wsops.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const dialect = process.argv[2];
if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error('usage: bench/mechanism-ab.ts sqlite|postgres [--records N]');
const records = Number(arg('records', '200000'));
const rounds = Number(arg('rounds', '3'));
const duration = Number(arg('duration', '5'));
const CONNECTIONS = 50;
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim().replace(/.*load average/, 'load average');

let databaseUrl: string;
if (dialect === 'sqlite') databaseUrl = `sqlite:${join(mkdtempSync(join(tmpdir(), 'wsops-ab-')), 'ab.db')}`;
else {
  const name = `wsops_ab_${process.pid}`;
  const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  databaseUrl = `postgres://postgres@127.0.0.1:5432/${name}`;
}

const services = await createServices(loadConfig({ WSOPS_DATABASE_URL: databaseUrl, WSOPS_SECRET: BENCH_SECRET }));
const now = Date.now();
const ws = await createWorkspace(services.database.db, 'Bench', ['assets'], new Date(now).toISOString());
log(`${dialect}: seeding ${records} assets`);
await seedRegister(services, ws.id, 'assets', records, { seed: 'bench', now });
const key = await assetsReadKey(services, ws.id, now);
await services.close();
if (dialect === 'postgres') await settleBulkLoad(databaseUrl, 'records');
if (dialect === 'sqlite') buildSqliteBaselineTable(databaseUrl.slice('sqlite:'.length), ws.id);
else await buildPostgresBaselineTable(databaseUrl, ws.id);

/** The plain alternatives measured on this dialect, each a server of its own. */
const variants = ['A', ...(process.env.AB_VARIANTS ?? (dialect === 'sqlite' ? 'compress,readahead,keycache,sql' : 'readahead,keycache,sessions,batch')).split(',')];
interface Server {
  name: string;
  origin: string;
  pid: number;
  stop(): Promise<void>;
}
const servers: Server[] = [];
for (const v of variants) {
  const port = await freePort();
  const env: Record<string, string> = v === 'A' ? {} : v === 'keycache' ? { WSOPS_KEY_CACHE: 'off' } : { AB_PLAIN: v };
  const child = await startWsops(databaseUrl, port, { env });
  servers.push({ name: v, origin: `http://127.0.0.1:${port}`, pid: child.pid as number, stop: () => stopProcess(child) });
}
const bport = await freePort();
const headers = { authorization: `Bearer ${key.key}` };
const scopesBody = await (await fetch(`${servers[0]?.origin}/api/v1/scopes`, { headers })).text();
const baselineChild = await startProcess(
  [...SERVER_FLAGS, '--import', 'tsx', 'bench/baseline-server.ts', databaseUrl, String(bport), scopesBody],
  {},
  `http://127.0.0.1:${bport}/assets?limit=1`,
);
const baseline: Server = {
  name: 'baseline',
  origin: `http://127.0.0.1:${bport}`,
  pid: baselineChild.pid as number,
  stop: () => stopProcess(baselineChild),
};

function sample<T>(items: readonly T[], n: number): T[] {
  return Array.from({ length: n }, () => items[Math.floor(Math.random() * items.length)] as T);
}

// Cursors at every depth from one walk of A (cursors are signed with the shared secret, so any server takes them).
const first = await walk(`${servers[0]?.origin}/api/v1/assets`, headers, 1000);
const paths = sample(first.cursors, 5000).map((c) => `/api/v1/assets?limit=100&cursor=${encodeURIComponent(c)}`);
const bwalk = await walk(`${baseline.origin}/assets`, {}, 1000);
const bpaths = sample(bwalk.cursors, 5000).map((c) => `/assets?limit=100&cursor=${encodeURIComponent(c)}`);
for (const s of servers.slice(1)) await walk(`${s.origin}/api/v1/assets`, headers, 1000);

interface Measured {
  rps: number;
  p99: number;
  cpuUs: number;
  errors: number;
}
const results = new Map<string, Measured[]>();
const note = (label: string, m: Measured) => {
  const list = results.get(label) ?? [];
  list.push(m);
  results.set(label, list);
  log(`  ${label}: ${Math.round(m.rps)} req/s, p99 ${m.p99} ms, ${m.cpuUs.toFixed(0)} µs CPU/req, errors ${m.errors}`);
};
async function loaded(s: Server, label: string, h: Record<string, string>, p: string[]): Promise<void> {
  await load(s.origin, h, p, CONNECTIONS, 2);
  const before = cpuSeconds(s.pid);
  const r: LoadResult = await load(s.origin, h, p, CONNECTIONS, duration);
  const cpu = cpuSeconds(s.pid) - before;
  note(label, { rps: r.rps, p99: r.p99, cpuUs: (cpu / Math.max(1, r.total)) * 1e6, errors: r.errors + r.non2xx });
}
async function walked(s: Server, label: string, h: Record<string, string>): Promise<void> {
  const before = cpuSeconds(s.pid);
  const w = await walk(`${s.origin}/api/v1/assets`, h, 1000);
  const cpu = cpuSeconds(s.pid) - before;
  const ok = w.records === first.records ? 0 : 1;
  log(`  ${label}: sent ${[...w.encodings].join(', ')}, ${(w.wireBytes / 1e6).toFixed(1)} MB`);
  note(label, { rps: w.records / w.seconds, p99: 0, cpuUs: (cpu / w.records) * 1e6, errors: ok });
}

const br = { ...headers, 'accept-encoding': 'br' };
const loads: string[] = [];
for (let r = 0; r < rounds; r++) {
  log(`round ${r + 1}: ${uptime()}`);
  loads.push(uptime());
  await loaded(baseline, '(a) baseline', {}, bpaths);
  for (const s of servers) if (s.name !== 'readahead') await loaded(s, `(a) ${s.name}`, headers, paths);
  for (const s of servers) if (s.name === 'A' || s.name === 'compress') await loaded(s, `(a) br ${s.name}`, br, paths);
  for (const s of servers) await walked(s, `(c) walk ${s.name}`, headers);
  for (const s of servers) if (s.name === 'A' || s.name === 'compress') await walked(s, `(c) walk br ${s.name}`, br);
  await loaded(baseline, '/bare', headers, ['/bare']);
  for (const s of servers) if (s.name === 'A' || s.name === 'keycache') await loaded(s, `/scopes ${s.name}`, headers, ['/api/v1/scopes']);
}
loads.push(uptime());
for (const s of [...servers, baseline]) await s.stop();

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
const out: string[] = [`${dialect}, ${records} assets, ${rounds} rounds of ${duration} s, ${CONNECTIONS} connections`, ...loads];
const naive = mean((results.get('(a) baseline') ?? []).map((m) => m.rps));
const bare = mean((results.get('/bare') ?? []).map((m) => m.rps));
for (const [label, ms] of results) {
  const rps = ms.map((m) => Math.round(m.rps));
  const ratio = label.startsWith('(a)') ? ` = ${(mean(rps) / naive).toFixed(2)}× baseline` : label.startsWith('/scopes') ? ` = ${((mean(rps) / bare) * 100).toFixed(0)}% of bare` : '';
  out.push(
    `${label}: ${rps.join(' / ')} (mean ${Math.round(mean(rps))})${ratio}; p99 ${ms.map((m) => m.p99).join('/')} ms; CPU/req ${ms.map((m) => m.cpuUs.toFixed(0)).join('/')} µs; errors ${ms.reduce((a, m) => a + m.errors, 0)}`,
  );
}
process.stdout.write(`${out.join('\n')}\n`);
if (dialect === 'postgres') {
  const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS wsops_ab_${process.pid} WITH (FORCE)`);
  await c.end();
}
