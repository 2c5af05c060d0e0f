import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { type Logger, silentLogger } from '../logger.js';
import { heedLostSessions } from './lost-sessions.js';
import type { DB } from './schema.js';
import { openSqliteReader } from './sqlite-reader.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  /** The raw better-sqlite3 handle, for bulk loading (SQLite only). */
  sqlite?: SQLite.Database;
  /**
   * A second, read-only SQLite connection for the hot read queries. It sees committed data
   * only: a read on the writer connection would run inside whatever transaction that
   * connection has open between two awaits (a domain action, say) and could see its
   * uncommitted writes.
   */
  sqliteReader?: SQLite.Database;
  /** The raw pg pool, for bulk loading (PostgreSQL only). */
  pool?: pg.Pool;
  close(): Promise<void>;
}

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

// pg returns int8/numeric as strings; our counters fit in a JS number.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

export interface OpenOptions {
  /** SQLite: megabytes of the file the read connection maps (WSOPS_SQLITE_MMAP_MB). */
  sqliteMmapMb?: number;
}

export function openDatabase(url: string, logger: Logger = silentLogger, options: OpenOptions = {}): Database {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const raw = new SQLite(path);
    // exec, not pragma(): pragma() prepares a statement that is then garbage (see preparedStatement).
    raw.exec('PRAGMA journal_mode = WAL');
    raw.exec('PRAGMA synchronous = NORMAL');
    raw.exec('PRAGMA busy_timeout = 10000');
    raw.exec('PRAGMA cache_size = -32768'); // 32 MB page cache
    raw.exec('PRAGMA temp_store = MEMORY');
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: cachingSqlite(raw) }) });
    const reader = path === ':memory:' ? undefined : openSqliteReader(path, options.sqliteMmapMb ?? 0);
    return {
      db,
      dialect: 'sqlite',
      sqlite: raw,
      sqliteReader: reader,
      async close() {
        reader?.close();
        await db.destroy();
      },
    };
  }
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  heedLostSessions(pool, logger);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', pool, close: () => db.destroy() };
}

export { redactUrl } from '../redact-url.js';
