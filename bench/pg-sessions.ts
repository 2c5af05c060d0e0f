/**
 * The PostgreSQL sessions one `wsops serve` holds after 4 s of mixed load (pages, filtered
 * pages, searches, /scopes; 50 connections), by application_name (issue 28, point 3;
 * docs/postgresql-sessions.md).
 *   node --import tsx bench/pg-sessions.ts
 */
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { seedRegister } from '../src/seed/seed.js';
import { createServices } from '../src/services.js';
import { createWorkspace } from '../src/workspaces/workspaces.js';
import { freePort, load, stopProcess } from './processes.js';
import { assetsReadKey, BENCH_SECRET, startWsops } from './wsops.js';

const admin = 'postgres://postgres@127.0.0.1:5432/postgres';
// Per process: helpers benchmarking at once on the shared server must not drop each other's database.
const name = `wsops_bench_sessions_${process.pid}`;
const c = new pg.Client({ connectionString: admin });
await c.connect();
await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
await c.query(`CREATE DATABASE ${name}`);
const url = `postgres://postgres@127.0.0.1:5432/${name}`;
const services = await createServices(loadConfig({ WSOPS_DATABASE_URL: url, WSOPS_SECRET: BENCH_SECRET }));
const now = Date.now();
const ws = await createWorkspace(services.database.db, 'Conn', ['assets'], new Date(now).toISOString());
await seedRegister(services, ws.id, 'assets', 20000, { seed: 'c', now });
const key = await assetsReadKey(services, ws.id, now);
await services.close();
const port = await freePort();
const server = await startWsops(url, port);
const headers = { authorization: `Bearer ${key.key}` };
await load(
  `http://127.0.0.1:${port}`,
  headers,
  ['/api/v1/assets?limit=100', '/api/v1/assets?limit=10&search=a', '/api/v1/scopes', '/api/v1/assets?limit=100&status=in_use'],
  50,
  4,
);
const r = await c.query(
  `SELECT coalesce(application_name,'') AS app, count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 GROUP BY 1 ORDER BY 1`,
  [name],
);
console.log(
  JSON.stringify(r.rows),
  'total',
  r.rows.reduce((s: number, x: { n: number }) => s + x.n, 0),
);
await stopProcess(server);
await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
await c.end();
process.exit(0);
