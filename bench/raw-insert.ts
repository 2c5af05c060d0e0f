/**
 * The database's own pace for an import's rows (issue 38): the rows `wsops import` would store
 * for an NDJSON body (the bench's importBody, passed in as `body`), inserted into a fresh wsops-migrated database with no
 * JavaScript per record but the driver's call. Rows are built outside the timed part.
 *   SQLite: one prepared single-row INSERT on wsops' writer connection (its pragmas), a
 *   transaction per import batch, the search index filled per batch as migration 0024 does.
 *   PostgreSQL: a prepared multi-row INSERT of 1,000 rows through `pg`, one transaction each.
 * The import's rate divided by this one is the ratio ADR 36 sets goals for.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { registerByPath } from '../src/registers/catalogue.js';
import { adapterOf, type Dialect, openDatabase, preparedStatement } from '../src/store/database.js';
import { migrate } from '../src/store/migrate.js';
import { COLUMNS } from '../src/store/record-batches.js';
import type { RecordsTable } from '../src/store/schema.js';
import { createWorkspace, parseModules } from '../src/workspaces/workspaces.js';
import { toRow } from '../src/writes/records.js';

const PG_ADMIN = process.env.WSOPS_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Rows per multi-row INSERT on PostgreSQL (12 columns: 12,000 parameters). */
const PG_ROWS = 1000;

/** The rows of the bench's NDJSON, a batch at a time, stamped as a new import stamps them. */
function* rowBatches(workspaceId: string, body: Iterable<Buffer>, size: number): Generator<RecordsTable[]> {
  const stamp = new Date().toISOString();
  let batch: RecordsTable[] = [];
  for (const chunk of body) {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line) continue;
      const op = JSON.parse(line) as { register: string; record: Record<string, unknown> };
      const register = registerByPath(op.register);
      if (!register) throw new Error(`unknown register ${op.register}`);
      batch.push(toRow(workspaceId, register, { ...op.record, created_at: stamp, updated_at: stamp }));
      if (batch.length === size) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length) yield batch;
}

async function freshUrl(dialect: Dialect): Promise<{ url: string; drop: () => Promise<void> }> {
  if (dialect === 'sqlite') {
    const file = join(tmpdir(), `wsops-raw-insert-${process.pid}.db`);
    rmSync(file, { force: true });
    return {
      url: `sqlite:${file}`,
      drop: async () => {
        for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
      },
    };
  }
  const name = `wsops_raw_insert_${process.pid}`;
  const admin = async (q: string) => {
    const c = new pg.Client({ connectionString: PG_ADMIN });
    await c.connect();
    await c.query(q);
    await c.end();
  };
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin(`CREATE DATABASE ${name}`);
  const u = new URL(PG_ADMIN);
  u.pathname = `/${name}`;
  return { url: u.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * Records/s of the raw insert of the rows of `body` (NDJSON upserts, the bench's importBody).
 * `every`: also the rate of each slice of that many rows, so an import's slice compares with the
 * raw insert into a table of the same size (both slow down as the table outgrows the page cache).
 */
export async function rawInsertRate(
  dialect: Dialect,
  body: () => Iterable<Buffer>,
  every = Number.POSITIVE_INFINITY,
): Promise<{ rate: number; seconds: number; cpuPerRecord: number; slices: number[] }> {
  const { url, drop } = await freshUrl(dialect);
  const database = openDatabase(url);
  let seconds = 0;
  let cpu = 0;
  let rows = 0;
  const slices: number[] = [];
  let slice = { rows: 0, seconds: 0 };
  /** Counts `n` rows inserted; closes a slice at each multiple of `every`. */
  const inserted = (n: number) => {
    rows += n;
    if (rows - slice.rows >= every) {
      slices.push((rows - slice.rows) / (seconds - slice.seconds));
      slice = { rows, seconds };
    }
  };
  /** Wall seconds and this process's CPU µs of `fn` (the database's too on SQLite: it runs in this process). */
  const timed = async (fn: () => unknown) => {
    const t = performance.now();
    const c = process.cpuUsage();
    await fn();
    const d = process.cpuUsage(c);
    cpu += d.user + d.system;
    seconds += (performance.now() - t) / 1000;
  };
  try {
    await migrate(database);
    const ws = await createWorkspace(database.db, 'raw', parseModules('all'), new Date().toISOString());
    if (dialect === 'sqlite') {
      const raw = database.sqlite;
      if (!raw) throw new Error('no SQLite handle');
      const insert = preparedStatement(raw, `INSERT INTO records (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`);
      const defer = preparedStatement(raw, 'INSERT INTO records_fts_deferred (deferred) VALUES (1)');
      const undefer = preparedStatement(raw, 'DELETE FROM records_fts_deferred');
      const index = preparedStatement(
        raw,
        `INSERT INTO records_fts (rowid, search_text) SELECT rowid, search_text FROM records
         WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))`,
      );
      const begin = preparedStatement(raw, 'BEGIN IMMEDIATE');
      const commit = preparedStatement(raw, 'COMMIT');
      for (const batch of rowBatches(ws.id, body(), adapterOf('sqlite').importBatchLines)) {
        const values = batch.map((r) => COLUMNS.map((c) => r[c]));
        const ids = JSON.stringify(batch.map((r) => r.id));
        await timed(() => {
          begin.run();
          defer.run();
          for (const v of values) insert.run(...v);
          index.run(ws.id, ids);
          undefer.run();
          commit.run();
        });
        inserted(batch.length);
      }
    } else {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const statement = (n: number) =>
          `INSERT INTO records (${COLUMNS.join(', ')}) VALUES ${Array.from(
            { length: n },
            (_, i) => `(${COLUMNS.map((_c, j) => `$${i * COLUMNS.length + j + 1}`).join(', ')})`,
          ).join(', ')}`;
        const full = statement(PG_ROWS);
        for (const batch of rowBatches(ws.id, body(), PG_ROWS)) {
          const values = batch.flatMap((r) => COLUMNS.map((c) => r[c]));
          const query = batch.length === PG_ROWS ? { name: 'raw_insert', text: full, values } : { text: statement(batch.length), values };
          await timed(async () => {
            await client.query('BEGIN');
            await client.query(query);
            await client.query('COMMIT');
          });
          inserted(batch.length);
        }
      } finally {
        await client.end();
      }
    }
  } finally {
    await database.close();
    await drop();
  }
  // A remainder under half a slice (the body's one site row) is not a slice of its own.
  if (rows - slice.rows >= every / 2) slices.push((rows - slice.rows) / (seconds - slice.seconds));
  return { rate: rows / seconds, seconds, cpuPerRecord: cpu / rows, slices };
}
