/**
 * The import's rate as the table grows, in-process (no HTTP): N people imported into a fresh
 * database from an NDJSON file (written before the timed part, read as `wsops import` reads it),
 * with records/s and CPU µs per record for each slice of `--every` lines, so a rate that decays
 * with the table's size shows as a curve. Beside it, the raw insert rate of the same rows into a
 * fresh database (raw-insert.ts), measured first in the same run, in total and per slice of the
 * same size, and each import rate's ratio to the raw rate at the same table size (ADR 36's
 * goals). `--dry-run`: the import checks and writes nothing.
 *   node --import tsx bench/import-curve.ts --dialect postgres --records 1000000 [--every 100000] [--dry-run] [--no-raw]
 */
import { createReadStream, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { sql } from '#kysely';
import { loadConfig } from '../src/config.js';
import { createServices } from '../src/services.js';
import { createWorkspace, parseModules } from '../src/workspaces/workspaces.js';
import { importRecords } from '../src/writes/import.js';
import { rawInsertRate } from './raw-insert.js';
import { importBody } from './write-bench.js';
import { BENCH_SECRET } from './wsops.js';

const { values } = parseArgs({
  options: {
    dialect: { type: 'string', default: 'postgres' },
    records: { type: 'string', default: '1000000' },
    every: { type: 'string', default: '100000' },
    'dry-run': { type: 'boolean', default: false },
    'no-raw': { type: 'boolean', default: false },
  },
});
const records = Number(values.records);
const every = Number(values.every);
const dialect = values.dialect === 'sqlite' ? 'sqlite' : 'postgres';
const loadNow = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const raw = values['no-raw'] ? undefined : await rawInsertRate(dialect, () => importBody(records, 'm'), every);
const rounded = (rate: number) => Math.round(rate).toLocaleString('en');
if (raw)
  process.stdout.write(
    `${dialect}: raw insert ${rounded(raw.rate)} records/s (${raw.seconds.toFixed(1)} s; slices of ${every.toLocaleString('en')}: ${raw.slices.map(rounded).join(', ')}), CPU µs/record: ${raw.cpuPerRecord.toFixed(1)} node; load ${loadNow()}\n`,
  );
/** ` = 0.52 of raw`, when the raw rate was measured; with `slice`, against the raw rate of that slice too. */
const ofRaw = (rate: number, slice?: number) => {
  if (!raw) return '';
  const same = slice === undefined ? undefined : raw.slices[slice];
  return ` = ${(rate / raw.rate).toFixed(2)} of raw${same ? `, ${(rate / same).toFixed(2)} of the raw slice` : ''}`;
};
// The file the import reads, as `wsops import FILE` does; generating it is not the import's time.
const file = `/tmp/import-curve-${process.pid}.ndjson`;
writeFileSync(file, '');
for (const chunk of importBody(records, 'm')) writeFileSync(file, chunk, { flag: 'a' });
const PG_ADMIN = process.env.WSOPS_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let url: string;
if (values.dialect === 'sqlite') {
  url = `sqlite:/tmp/import-curve-${process.pid}.db`;
} else {
  const c = new pg.Client({ connectionString: PG_ADMIN });
  await c.connect();
  await c.query('DROP DATABASE IF EXISTS wsops_import_curve WITH (FORCE)');
  await c.query('CREATE DATABASE wsops_import_curve');
  // WSOPS_CURVE_EXPLAIN=ms: the server's log gets the plan (with buffers) of every slower statement.
  const explain = process.env.WSOPS_CURVE_EXPLAIN;
  if (explain) {
    await c.query(`ALTER DATABASE wsops_import_curve SET session_preload_libraries = 'auto_explain'`);
    for (const [k, v] of [
      ['log_min_duration', explain],
      ['log_analyze', 'on'],
      ['log_buffers', 'on'],
      ['log_nested_statements', 'on'],
    ])
      await c.query(`ALTER DATABASE wsops_import_curve SET auto_explain.${k} = '${v}'`);
  }
  await c.end();
  const u = new URL(PG_ADMIN);
  u.pathname = '/wsops_import_curve';
  url = u.toString();
}
const services = await createServices(loadConfig({ WSOPS_DATABASE_URL: url, WSOPS_SECRET: BENCH_SECRET }));
const ws = await createWorkspace(services.database.db, 'curve', parseModules('all'), new Date().toISOString());

/** CPU µs of the PostgreSQL backends serving this database (same machine: read from /proc). */
const backendPids = new Set<number>();
async function backendCpu(): Promise<number> {
  if (values.dialect === 'sqlite') return 0;
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(
    services.database.db,
  );
  for (const r of rows) backendPids.add(r.pid);
  let ticks = 0;
  for (const pid of backendPids) {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // an ended backend: its time is lost (the pool keeps its sessions, so rarely)
    }
  }
  return ticks * 10_000;
}
let mark = { lines: 0, t: performance.now(), cpu: process.cpuUsage(), db: await backendCpu() };
const started = mark;
let busy = false;
process.stdout.write(
  `${values.dialect}: ${records.toLocaleString('en')} people${values['dry-run'] ? ', dry run' : ''}, load ${loadNow()}\n`,
);
let slice = 0;
const report = await importRecords(services, ws.id, createReadStream(file), {
  actor: 'bench',
  dryRun: values['dry-run'],
  onProgress: ({ lines }) => {
    if (lines - mark.lines < every || busy) return;
    busy = true;
    const t = performance.now();
    const cpu = process.cpuUsage(mark.cpu);
    const n = lines - mark.lines;
    void backendCpu().then((db) => {
      process.stdout.write(
        `${lines.toLocaleString('en').padStart(10)} lines: ${Math.round((n / (t - mark.t)) * 1000)
          .toLocaleString('en')
          .padStart(
            7,
          )} records/s${ofRaw((n / (t - mark.t)) * 1000, slice++)}, CPU µs/record: ${((cpu.user + cpu.system) / n).toFixed(1)} node, ${((db - mark.db) / n).toFixed(1)} database backends; load ${loadavg()[0]?.toFixed(2)}\n`,
      );
      mark = { lines, t, cpu: process.cpuUsage(), db };
      busy = false;
    });
  },
});
const secs = (performance.now() - started.t) / 1000;
const cpu = process.cpuUsage(started.cpu);
const db = (await backendCpu()) - started.db;
process.stdout.write(
  `total: ${Math.round(records / secs).toLocaleString('en')} records/s${ofRaw(records / secs)} (${secs.toFixed(1)} s), CPU µs/record: ${((cpu.user + cpu.system) / records).toFixed(1)} node, ${(db / records).toFixed(1)} database backends; refused ${report.refused_count}; load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
await services.close();
rmSync(file, { force: true });
// The database is the benchmark's own: dropped, unless its plans were logged (to read them against it).
if (values.dialect === 'sqlite') rmSync(url.slice('sqlite:'.length), { force: true });
else if (!process.env.WSOPS_CURVE_EXPLAIN) {
  const c = new pg.Client({ connectionString: PG_ADMIN });
  await c.connect();
  await c.query('DROP DATABASE IF EXISTS wsops_import_curve WITH (FORCE)');
  await c.end();
}
