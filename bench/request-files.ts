/**
 * Which source files one list request runs, and their lines (issue 28: "one list request
 * touches N files"). `node --import tsx bench/request-files.ts [sqlite|postgres]`.
 *
 * Method: a real server in this process (createServices + buildApp, listening on loopback) over a
 * fresh database with 1,000 assets; a walk's first two pages go uncounted (the JIT, the key
 * cache, the sessions that open on first use); then V8's precise coverage (call counts) is reset,
 * the walk's third page is requested over HTTP, and every file under src/ with at least one
 * function called during that request, or in the 200 ms after it (what it set going, such as
 * the read-ahead of the next page), is counted, with all its lines. Both identity and
 * `Accept-Encoding: br`. Files of node_modules are not counted.
 */
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { request } from 'undici';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { seedRegister } from '../src/seed/seed.js';
import { createServices } from '../src/services.js';
import { createWorkspace } from '../src/workspaces/workspaces.js';
import { ROOT as ROOT_URL_PATH } from './processes.js';
import { assetsReadKey, BENCH_SECRET } from './wsops.js';

const dialect = process.argv[2] ?? 'sqlite';
/** The checkout, without the trailing slash processes.ts' ROOT has. */
const ROOT = ROOT_URL_PATH.replace(/\/$/, '');
const PG_ADMIN = process.env.WSOPS_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_NAME = `wsops_request_files_${process.pid}`;

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_ADMIN });
  await c.connect();
  await c.query(sql);
  await c.end();
}

let databaseUrl = `sqlite:${ROOT}/bench/.request-files-${process.pid}.db`;
if (dialect === 'postgres') {
  await admin(`CREATE DATABASE ${PG_NAME}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${PG_NAME}`;
  databaseUrl = url.toString();
}

const services = await createServices(loadConfig({ ...process.env, WSOPS_DATABASE_URL: databaseUrl, WSOPS_SECRET: BENCH_SECRET }));
const now = Date.now();
const ws = await createWorkspace(services.database.db, 'Files', ['assets'], new Date(now).toISOString());
await seedRegister(services, ws.id, 'assets', 1000, { seed: 'files', now });
const { key } = await assetsReadKey(services, ws.id, now);
const app = buildApp(services);
// Before issue 28 the server started page threads (WSOPS_PAGE_THREADS, default 1) before listening.
const threads = services as unknown as { startPageThreads?: () => Promise<void> };
await threads.startPageThreads?.();
const address = await app.listen({ port: 0, host: '127.0.0.1' });

async function page(cursor: string | undefined, encoding: string): Promise<string> {
  const url = `${address}/api/v1/assets?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (encoding !== 'identity') headers['accept-encoding'] = encoding;
  const res = await request(url, { headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${body.toString()}`);
  // The third page's cursor is read from an identity page; a compressed one is not parsed.
  return encoding === 'identity' ? (JSON.parse(body.toString()).next_cursor as string) : '';
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

for (const encoding of ['identity', 'br']) {
  const second = await page(await page(undefined, 'identity'), 'identity');
  await session.post('Profiler.takePreciseCoverage'); // resets the counts
  await page(second, encoding);
  // What the request set going after its response (the read-ahead of the next page) counts too.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Map<string, number>();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const path = fileURLToPath(script.url);
    if (!path.startsWith(`${ROOT}/src/`)) continue;
    if (!script.functions.some((f) => f.ranges.some((r) => r.count > 0))) continue;
    files.set(path.slice(ROOT.length + 1), readFileSync(path, 'utf8').split('\n').length - 1);
  }
  const sorted = [...files].sort(([a], [b]) => a.localeCompare(b));
  const lines = sorted.reduce((n, [, l]) => n + l, 0);
  process.stdout.write(`${dialect}, ${encoding}: ${sorted.length} files, ${lines} lines\n`);
  for (const [file, l] of sorted) process.stdout.write(`  ${String(l).padStart(5)} ${file}\n`);
}

await session.post('Profiler.stopPreciseCoverage');
session.disconnect();
await app.close();
await services.close();
if (dialect === 'postgres') await admin(`DROP DATABASE IF EXISTS ${PG_NAME} WITH (FORCE)`);
else
  for (const suffix of ['', '-wal', '-shm'])
    await import('node:fs').then((fs) => fs.rmSync(`${databaseUrl.slice(7)}${suffix}`, { force: true }));
