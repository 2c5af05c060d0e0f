/** SQLite's side of the database seam (engine.ts): better-sqlite3, a writer and a read-only connection. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import type { DB } from '../schema.js';
import { openSqliteReader } from '../sqlite-reader.js';
import type { Adapter, AuthChanges, Database, Engine, OpenOptions } from './engine.js';
import { sqliteQueue } from './sqlite-queue.js';

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
      // Kysely opens transactions with a plain (deferred) BEGIN. A deferred transaction that reads
      // first and writes later fails with SQLITE_BUSY_SNAPSHOT when another process (an API node
      // beside a worker) committed in between; busy_timeout cannot help. BEGIN IMMEDIATE takes
      // the write lock up front, so writers queue on busy_timeout instead.
      const sqlText = /^begin$/i.test(text.trim()) ? 'BEGIN IMMEDIATE' : text;
      let stmt = cache.get(sqlText);
      if (!stmt) {
        stmt = raw.prepare(sqlText);
        if (cache.size < 5000) cache.set(sqlText, stmt);
      }
      return stmt;
    },
  };
}

const preparedByConnection = new WeakMap<SQLite.Database, Map<string, SQLite.Statement>>();

/**
 * A prepared statement of `raw`, prepared once per SQL text and kept for the connection's life.
 * Besides saving the prepare, this keeps statements from being garbage-collected while the
 * process runs: on Node.js 24, better-sqlite3 12's statement finalizer can abort the process
 * (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook, WiseLibs/better-sqlite3
 * #1515), so no code path may drop prepared statements. Use this for every raw prepare.
 */
export function preparedStatement(raw: SQLite.Database, sqlText: string): SQLite.Statement {
  let byText = preparedByConnection.get(raw);
  if (!byText) {
    byText = new Map();
    preparedByConnection.set(raw, byText);
  }
  let stmt = byText.get(sqlText);
  if (!stmt) {
    stmt = raw.prepare(sqlText);
    byText.set(sqlText, stmt);
  }
  return stmt;
}

export const sqliteAdapter: Adapter = {
  name: 'sqlite',
  serialize: async () => {},
  lockRows: (query) => query,
  inIndexOrder: (target, fn) => fn(target),
  async beginSnapshot(conn) {
    await sql`BEGIN DEFERRED`.execute(conn);
  },
  afterExplicitIds: async () => {},
  ...sqliteQueue,
};

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** `path` is what follows `sqlite:` in the URL (`:memory:` for a private in-memory database). */
export function openSqlite(path: string, options: OpenOptions): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new SQLite(path);
  // exec, not pragma(): pragma() prepares a statement that is then garbage (see preparedStatement).
  raw.exec('PRAGMA journal_mode = WAL');
  raw.exec('PRAGMA synchronous = NORMAL');
  raw.exec('PRAGMA busy_timeout = 10000');
  raw.exec('PRAGMA cache_size = -32768'); // 32 MB page cache
  raw.exec('PRAGMA temp_store = MEMORY');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: cachingSqlite(raw) }) });
  // An in-memory database cannot be opened by a second connection: reads use the writer's.
  const reader = path === ':memory:' ? undefined : openSqliteReader(path, options.sqliteMmapMb ?? 0);
  const committed = reader ?? raw;
  const engine: Engine = {
    ...sqliteAdapter,
    readCommitted: async <R>(sqlText: string) => preparedStatement(committed, sqlText).all() as R[],
    async rowWriter(table) {
      const statements = new Map<string, (row: Record<string, unknown>) => void>();
      const statementFor = (row: Record<string, unknown>) => {
        const columns = Object.keys(row);
        const shape = columns.join(',');
        let run = statements.get(shape);
        if (!run) {
          const insert = preparedStatement(
            raw,
            `INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
          );
          run = (r) => insert.run(columns.map((c) => r[c]));
          statements.set(shape, run);
        }
        return run;
      };
      return async (rows) => {
        const run = statementFor(rows[0] as Record<string, unknown>);
        raw
          .transaction(() => {
            for (const row of rows) run(row);
          })
          .immediate();
      };
    },
    authChanges: (invalidate) => versionStamp(committed, invalidate),
  };
  return {
    db,
    dialect: 'sqlite',
    engine,
    sqlite: raw,
    sqliteReader: reader,
    async close() {
      reader?.close();
      await db.destroy();
    },
  };
}

/**
 * The key cache's trust on SQLite: the one-row `auth_version` stamp, moved by triggers in every
 * writing transaction (migration 0014), read with one prepared statement on the read connection
 * (a new read sees every committed write of every process). True when the stamp could be read;
 * empties the cache first whenever it moved.
 *
 * One read serves every request that asked since the last one. A read costs 20–25 µs on a
 * 2-core VM (a read transaction takes and releases WAL locks with system calls), as much as the
 * rest of `/api/v1/scopes`. The read runs in the event loop's check phase (setImmediate), after
 * the poll phase has parsed every request that arrived together and each has asked: every
 * request sharing the read was received before it, so it sees every commit made before the
 * request was sent. A request that asks after the read waits for the next one.
 */
function versionStamp(connection: SQLite.Database, invalidate: (what: string) => void): AuthChanges {
  let stamp: SQLite.Statement | undefined;
  let seen: unknown;
  let barrier: Promise<boolean> | undefined;
  const read = (): boolean => {
    try {
      // Prepared on first use: a process started before migration 0014 was applied bypasses
      // the cache (and tries again on the next request) rather than failing every request.
      stamp ??= connection.prepare('SELECT version FROM auth_version WHERE id = 1').pluck();
      const version = stamp.get();
      if (version !== seen) {
        invalidate('*');
        seen = version;
      }
      return true;
    } catch {
      return false;
    }
  };
  return {
    trusted() {
      barrier ??= new Promise<boolean>((resolve) =>
        setImmediate(() => {
          barrier = undefined;
          resolve(read());
        }),
      );
      return barrier;
    },
  };
}
