/** PostgreSQL's side of the database seam (engine.ts): one pg pool, a LISTEN session for the key cache. */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from '../../logger.js';
import { AuthListener } from '../auth-listener.js';
import { heedLostSessions } from '../lost-sessions.js';
import type { DB } from '../schema.js';
import type { Adapter, Database, Engine } from './engine.js';
import { postgresQueue } from './postgres-queue.js';

/**
 * Sessions of the main pool: queries built with Kysely (writes, the console, the operator API),
 * key lookups and searches. Pages without a text search run on sessions of their own
 * (page-sessions.ts). A process's event loop sends one query at a time and the server runs as
 * many at once as it has cores; five keep a write that waits on a lock, or a slow search, from
 * holding up the rest. It was 10; the sessions past the fifth only queued in PostgreSQL.
 */
export const POOL_SESSIONS = 5;

// pg returns int8/numeric as strings; our counters fit in a JS number.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

export const postgresAdapter: Adapter = {
  name: 'postgres',
  async serialize(trx, key) {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
  },
  lockRows: (query) => query.forUpdate(),
  inIndexOrder: (target, fn) =>
    target.transaction().execute(async (trx) => {
      await sql`SELECT set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('jit', 'off', true)`.execute(
        trx,
      );
      return fn(trx);
    }),
  async beginSnapshot(conn) {
    await sql`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`.execute(conn);
  },
  async afterExplicitIds(db, tables) {
    for (const table of await db.introspection.getTables()) {
      if (!tables.has(table.name)) continue;
      for (const column of table.columns.filter((c) => c.isAutoIncrementing)) {
        const col = sql.ref(column.name);
        await sql`SELECT setval(pg_get_serial_sequence(${table.name}, ${column.name}), coalesce(max(${col}), 0) + 1, false)
            FROM ${sql.table(table.name)}`.execute(db);
      }
    }
  },
  ...postgresQueue,
};

export function openPostgres(url: string, logger: Logger): Database {
  const pool = new pg.Pool({ connectionString: url, max: POOL_SESSIONS, application_name: 'wsops' });
  heedLostSessions(pool, logger);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  const engine: Engine = {
    ...postgresAdapter,
    readCommitted: async <R>(sqlText: string) => (await sql<R>`${sql.raw(sqlText)}`.execute(db)).rows,
    async rowWriter(table) {
      const described = (await db.introspection.getTables()).find((x) => x.name === table);
      const types = new Map((described?.columns ?? []).map((c) => [c.name, c.dataType]));
      return async (rows) => {
        const columns = Object.keys(rows[0] as Record<string, unknown>);
        const arrays = columns.map((c) => {
          const type = types.get(c);
          if (!type || !/^[a-z0-9_]+$/.test(type))
            throw new Error(`the target's ${table} has no column ${c}: migrate both to the same version`);
          return sql`${rows.map((r) => r[c])}::${sql.raw(type)}[]`;
        });
        await sql`INSERT INTO ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))})
          SELECT * FROM unnest(${sql.join(arrays)})`.execute(db);
      };
    },
    // Notifications drop the entries they name, each request waits for the listener's barrier
    // (shared by the requests that arrive together), and the cache is bypassed whenever that
    // session is not established. The session opens at the first authentication, so CLI
    // commands and worker-only processes never open one.
    authChanges(invalidate, log) {
      const listener = new AuthListener(url, invalidate, log.child({ component: 'key-cache' }));
      return { trusted: () => listener.barrier(), close: () => listener.close() };
    },
  };
  return { db, dialect: 'postgres', engine, pool, close: () => db.destroy() };
}
