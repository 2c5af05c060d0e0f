/**
 * SQLite's side of the database seam (engine.ts): better-sqlite3, a writer connection and a
 * read-only one (what is read on that one is in sqlite-reads.ts).
 */
import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, type RawBuilder, SqliteDialect, sql } from '#kysely';
import { changedColumns, KEY_COLUMNS, WORKSPACE_COLUMNS } from '../auth-change-triggers.js';
import { COLUMNS, INDEX_SLICE_ROWS, nextSlice, type StoredRecord, sliceUsed, upsertOneSql } from '../record-batches.js';
import type { DB, RecordsTable } from '../schema.js';
import { deletedAtOf } from '../tombstones.js';
import { sqliteDocFields } from './doc-fields.js';
import type { Adapter, Database, Engine, OpenOptions } from './engine.js';
import { sqliteActionStatements } from './sqlite-actions.js';
import { checkpointInBackground, WAL_LIMIT_BYTES } from './sqlite-checkpoints.js';
import { preparedStatement } from './sqlite-prepared.js';
import { sqliteQueue } from './sqlite-queue.js';
import { LIMIT, openSqliteReader, sqliteHotQueries, sqlitePages, versionStamp } from './sqlite-reads.js';
import { BUSY_TIMEOUT_MS, lockWaitingDialect } from './sqlite-write-lock.js';
import { type TableKeyRow, tableKeysOf } from './table-keys.js';

/** What Kysely runs for a ROLLBACK when SQLite already rolled the transaction back. */
const NOTHING_TO_ROLL_BACK = { reader: false, run: () => ({ changes: 0, lastInsertRowid: 0 }) } as unknown as SQLite.Statement;

/**
 * Kysely prepares every query it runs; better-sqlite3's prepare costs tens of microseconds, so
 * keep prepared statements by SQL text. The set of distinct SQL texts is small and bounded
 * (one per query shape), so the cache cannot grow without limit.
 */
function cachingSqlite(raw: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => raw.close(),
    prepare(text: string) {
      // SQLite rolls a transaction back by itself on some errors (SQLITE_FULL, SQLITE_IOERR):
      // Kysely's ROLLBACK then fails with "no transaction is active" and that error would be
      // thrown instead of the one that says what happened. (Transactions begin in
      // sqlite-write-lock.ts, with BEGIN IMMEDIATE.)
      if (/^rollback$/i.test(text.trim()) && !raw.inTransaction) return NOTHING_TO_ROLL_BACK;
      let stmt = cache.get(text);
      if (!stmt) {
        stmt = raw.prepare(text);
        if (cache.size < 5000) cache.set(text, stmt);
      }
      return stmt;
    },
  };
}

/** A deleted record's tombstone: the deletions feed's row (a second deletion moves its time). */
const BURY = `INSERT INTO record_tombstones (workspace_id, id, register, deleted_at) VALUES (?, ?, ?, ?)
  ON CONFLICT (workspace_id, id) DO UPDATE SET register = excluded.register, deleted_at = excluded.deleted_at`;
const UNBURY = 'DELETE FROM record_tombstones WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))';

export const sqliteAdapter: Adapter = {
  name: 'sqlite',
  // A batch holds the one write lock: shorter batches let other writers (the delivery worker) in sooner (ADR 36).
  importBatchLines: 250,
  exportPageRows: 1000,
  scanSliceRows: 1000,
  limitPlaceholder: LIMIT,
  lockRows: (query) => query,
  inIndexOrder: (target, fn) => fn(target),
  async beginSnapshot(conn) {
    await sql`BEGIN DEFERRED`.execute(conn);
  },
  afterExplicitIds: async () => {},
  async tableKeys(db) {
    const { rows } = await sql<TableKeyRow>`
      SELECT m.name AS "table", p.name AS "column", p.pk AS pk, NULL AS parent
        FROM sqlite_master m JOIN pragma_table_info(m.name) p ON p.pk > 0 WHERE m.type = 'table'
      UNION ALL
      SELECT m.name, NULL, 0, f."table" FROM sqlite_master m JOIN pragma_foreign_key_list(m.name) f WHERE m.type = 'table'
      ORDER BY 1, 3`.execute(db);
    return tableKeysOf(rows);
  },
  // One row whose version every admission change moves, in the writing transaction. A process
  // reads it on each request (versionStamp in sqlite-reads.ts) and trusts its cache only while
  // the version is the one it was filled under.
  async createAuthChangeSignals(db) {
    await sql`CREATE TABLE auth_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`.execute(db);
    await sql`INSERT INTO auth_version (id, version) VALUES (1, 0)`.execute(db);
    await sql.raw(keyUpdateTrigger(KEY_COLUMNS)).execute(db);
    await sql.raw(`CREATE TRIGGER api_keys_auth_delete AFTER DELETE ON api_keys ${BUMP}`).execute(db);
    await sql
      .raw(`CREATE TRIGGER workspaces_auth_update AFTER UPDATE ON workspaces WHEN ${changedColumns(WORKSPACE_COLUMNS, 'IS NOT')} ${BUMP}`)
      .execute(db);
    await sql.raw(`CREATE TRIGGER workspaces_auth_delete AFTER DELETE ON workspaces ${BUMP}`).execute(db);
  },
  async watchKeyColumns(db, columns) {
    await sql`DROP TRIGGER api_keys_auth_update`.execute(db);
    await sql.raw(keyUpdateTrigger(columns)).execute(db);
  },
  ...sqliteQueue,
  ...sqliteDocFields,
};

const BUMP = 'BEGIN UPDATE auth_version SET version = version + 1 WHERE id = 1; END';

const keyUpdateTrigger = (columns: readonly string[]) =>
  `CREATE TRIGGER api_keys_auth_update AFTER UPDATE ON api_keys WHEN ${changedColumns(columns, 'IS NOT')} ${BUMP}`;

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/**
 * `mkdir -p`, one level at a time: Node 20-24's own `recursive: true` spins forever where mkdir
 * answers ENOENT under an existing parent (/proc/nope), instead of failing. A folder made here
 * holds every workspace's data: only its owner may enter it, whatever the umask.
 */
function makeDirectory(directory: string): void {
  const found = statSync(directory, { throwIfNoEntry: false });
  if (found?.isDirectory()) return;
  if (found) throw Object.assign(new Error(`${directory} is not a directory`), { code: 'ENOTDIR' });
  const parent = dirname(directory);
  if (parent !== directory) makeDirectory(parent);
  try {
    mkdirSync(directory, { mode: 0o700 });
    chmodSync(directory, 0o700);
  } catch (error) {
    // Another process (a second CLI command) made it in between: that is what we wanted.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/**
 * Creates the database file readable by its owner only, before SQLite opens it: SQLite gives the
 * `-wal` and `-shm` files it makes the database file's mode, and it would create the database
 * itself under the umask (0644 with the usual 022), readable by every user of the machine. An
 * existing file keeps the mode its operator gave it.
 */
function createPrivateFile(path: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  try {
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

/** `path` is what follows `sqlite:` in the URL (`:memory:` for a private in-memory database). */
export function openSqlite(path: string, options: OpenOptions): Omit<Database, 'storage'> {
  if (path !== ':memory:') {
    makeDirectory(dirname(path));
    createPrivateFile(path);
  }
  const raw = new SQLite(path);
  // exec, not pragma(): pragma() prepares a statement that is then garbage (see preparedStatement).
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  raw.exec('PRAGMA cache_size = -32768'); // 32 MB page cache
  raw.exec('PRAGMA temp_store = MEMORY');
  // Steady writes (an import, actions) grow the WAL past this between checkpoints; when it starts
  // over (the RESTART checkpoint, sqlite-checkpoints.ts) this cuts the file back instead of
  // keeping the whole size on disk until the process ends.
  raw.exec(`PRAGMA journal_size_limit = ${WAL_LIMIT_BYTES}`);
  const checkpoints = path === ':memory:' ? undefined : checkpointInBackground(raw, path);
  const db = new Kysely<DB>({ dialect: lockWaitingDialect(new SqliteDialect({ database: cachingSqlite(raw) }), raw) });
  // An in-memory database cannot be opened by a second connection: reads use the writer's.
  const reader = path === ':memory:' ? undefined : openSqliteReader(path, options.sqliteMmapMb ?? 0);
  const committed = reader ?? raw;
  const hot = sqliteHotQueries(committed);
  const engine: Engine = {
    ...sqliteAdapter,
    hot,
    openPages: () => sqlitePages(hot, reader),
    readCommitted: async <R>(query: string | RawBuilder<R>) => {
      const compiled = typeof query === 'string' ? { sql: query, parameters: [] } : query.compile(db);
      return preparedStatement(committed, compiled.sql).all(...compiled.parameters) as R[];
    },
    async rowWriter(table) {
      const statements = new Map<string, (row: Record<string, unknown>) => number | bigint>();
      const statementFor = (row: Record<string, unknown>) => {
        const columns = Object.keys(row);
        const shape = columns.join(',');
        let run = statements.get(shape);
        if (!run) {
          const insert = preparedStatement(
            raw,
            `INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
          );
          run = (r) => insert.run(columns.map((c) => r[c])).lastInsertRowid;
          statements.set(shape, run);
        }
        return run;
      };
      // Records: the page's search words indexed by one statement after its inserts, as an
      // import's batch does (migration 0024), instead of the insert trigger's one FTS5 statement
      // per row, which is most of what a seeded or copied record costs. The index ends the same.
      const records = table === 'records';
      const deferIndex = records ? preparedStatement(raw, 'INSERT INTO records_fts_deferred (deferred) VALUES (1)') : undefined;
      const undeferIndex = records ? preparedStatement(raw, 'DELETE FROM records_fts_deferred') : undefined;
      const indexRows = records
        ? preparedStatement(
            raw,
            'INSERT INTO records_fts (rowid, search_text) SELECT rowid, search_text FROM records WHERE rowid IN (SELECT value FROM json_each(?))',
          )
        : undefined;
      return async (rows) => {
        const run = statementFor(rows[0] as Record<string, unknown>);
        raw
          .transaction(() => {
            deferIndex?.run();
            const rowids = rows.map((row) => run(row));
            if (indexRows && undeferIndex) {
              indexRows.run(JSON.stringify(rowids.map(Number)));
              undeferIndex.run();
            }
          })
          .immediate();
      };
    },
    authChanges: (invalidate) => versionStamp(committed, invalidate),
    actionStatements: (_trx, workspaceId) => sqliteActionStatements(raw, workspaceId),
    writeRecords: (fn) =>
      db.transaction().execute(async (trx) => {
        // The Kysely transaction holds the one writer connection; the raw statements below run on
        // that same connection, inside it, without a round trip each.
        const upsert = preparedStatement(
          raw,
          upsertOneSql(() => '?'),
        );
        const current = preparedStatement(
          raw,
          'SELECT id, register, created_at, updated_at, doc FROM records WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))',
        );
        const existing = preparedStatement(raw, 'SELECT id FROM records WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))');
        const remove = preparedStatement(raw, 'DELETE FROM records WHERE workspace_id = ? AND id = ? RETURNING register, updated_at');
        const naming = preparedStatement(
          raw,
          `SELECT r.id, r.register, r.created_at, r.updated_at, r.doc FROM records r
         WHERE r.workspace_id = ? AND r.id IN (SELECT source_id FROM record_refs
           WHERE workspace_id = ? AND target_id IN (SELECT value FROM json_each(?)))`,
        );
        // Migration 0024: while the flag row exists (only inside this transaction), the insert
        // trigger leaves the search index alone and one statement indexes the batch's new rows.
        const deferIndex = preparedStatement(raw, 'INSERT INTO records_fts_deferred (deferred) VALUES (1)');
        const undeferIndex = preparedStatement(raw, 'DELETE FROM records_fts_deferred');
        const progress = preparedStatement(raw, 'UPDATE record_imports SET lines = ?, refused = ?, report = ?, alive_at = ? WHERE id = ?');
        const indexNew = preparedStatement(
          raw,
          `INSERT INTO records_fts (rowid, search_text) SELECT rowid, search_text FROM records
         WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))`,
        );
        return fn({
          db: trx,
          async current(workspaceId, ids) {
            const rows = current.all(workspaceId, JSON.stringify(ids)) as StoredRecord[];
            return new Map(rows.map((r) => [r.id, r]));
          },
          async existing(workspaceId, ids) {
            return new Set((existing.all(workspaceId, JSON.stringify(ids)) as { id: string }[]).map((r) => r.id));
          },
          async importProgress(p) {
            progress.run(p.lines, p.refused, p.report, p.aliveAt, p.id);
          },
          async upsert(rows, created) {
            const workspaceId = rows[0]?.workspace_id;
            // One row is cheaper with the trigger (no flag to write); a batch's new rows are not.
            const byBatch = workspaceId !== undefined && created !== undefined && created.size > 1;
            if (byBatch) deferIndex.run();
            // Each row costs real work (its indexes, the search index): the event loop serves
            // requests between slices, so a batch never holds it for more than SLICE_MS.
            for (const r of rows as RecordsTable[]) {
              upsert.run(...COLUMNS.map((c) => r[c]));
              if (sliceUsed()) await nextSlice();
            }
            // A record written again under a deleted id leaves the deletions feed (tombstones.ts).
            if (workspaceId !== undefined) {
              preparedStatement(raw, UNBURY).run(workspaceId, JSON.stringify(created ? [...created] : rows.map((r) => r.id)));
            }
            if (byBatch) {
              // In slices too: a whole batch's rows in one statement would hold the event loop.
              const ids = [...created];
              for (let i = 0; i < ids.length; i += INDEX_SLICE_ROWS) {
                indexNew.run(workspaceId, JSON.stringify(ids.slice(i, i + INDEX_SLICE_ROWS)));
                if (sliceUsed()) await nextSlice();
              }
              undeferIndex.run();
            }
          },
          async naming(workspaceId, ids) {
            return naming.all(workspaceId, workspaceId, JSON.stringify(ids)) as StoredRecord[];
          },
          async delete(workspaceId, ids, now) {
            const bury = preparedStatement(raw, BURY);
            for (const id of ids) {
              const gone = remove.get(workspaceId, id) as { register: string; updated_at: string } | undefined;
              if (gone) bury.run(workspaceId, id, gone.register, deletedAtOf(gone.updated_at, now));
            }
          },
        });
      }),
  };
  return {
    db,
    // One writer connection: the delivery loop's transactions queue with the others.
    deliveries: db,
    dialect: 'sqlite',
    engine,
    sqlite: raw,
    sqliteReader: reader,
    async close() {
      await checkpoints?.close();
      reader?.close();
      await db.destroy();
      // Kysely closes the connection only once a query through it has opened its driver; a
      // database nobody queried through `db` (already migrated, read by other paths) is closed here.
      if (raw.open) raw.close();
    },
  };
}
