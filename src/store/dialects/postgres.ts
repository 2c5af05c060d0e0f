/**
 * PostgreSQL's side of the database seam (engine.ts): one pg pool, a LISTEN session for the key
 * cache (listen-session.ts); what an API request reads is in postgres-reads.ts.
 */
import { Kysely, PostgresDialect, type RawBuilder, sql } from '#kysely';
import type { Logger } from '../../logger.js';
import { AUTH_CHANNEL, changedColumns, KEY_COLUMNS, WORKSPACE_COLUMNS } from '../auth-change-triggers.js';
import { AuthListener } from '../listen-session.js';
import { heedLostSessions } from '../lost-sessions.js';
import { pgDriver } from '../pg-driver.js';
import { COLUMNS, type StoredRecord, UPDATED } from '../record-batches.js';
import type { DB } from '../schema.js';
import { deletedAtOf } from '../tombstones.js';
import { postgresDocFields } from './doc-fields.js';
import type { Adapter, Database, Engine } from './engine.js';
import { postgresActionStatements } from './postgres-actions.js';
import { announcingDialect, JobAnnouncer } from './postgres-jobs.js';
import { preparingPool } from './postgres-prepared.js';
import { postgresQueue } from './postgres-queue.js';
import { PAGE_SESSIONS, PostgresPages, pageSessions, postgresHotQueries, snapshotCurrency } from './postgres-reads.js';
import { type TableKeyRow, tableKeysOf } from './table-keys.js';

/**
 * Sessions of the main pool: queries built with Kysely (writes, the console, the operator API),
 * key lookups and searches. Pages without a text search run on sessions of their own
 * (postgres-reads.ts). A process's event loop sends one query at a time and the server runs as
 * many at once as it has cores; five keep a write that waits on a lock, or a slow search, from
 * holding up the rest. It was 10; the sessions past the fifth only queued in PostgreSQL.
 */
export const POOL_SESSIONS = 5;
/**
 * Sessions of the delivery loop's own pool: its claims and records never wait in the main pool's
 * queue behind the request transactions (ADR 42; in one `serve`, 64 domain actions in flight held
 * the claims back by seconds). Claims are one at a time; the second session records outcomes meanwhile.
 */
export const DELIVERY_SESSIONS = 2;

/**
 * Buckets of ids a write serialises its creations on (the advisory locks of current()): few enough
 * that an import batch of a thousand ids takes few of PostgreSQL's shared lock slots, many enough
 * that writers of different ids seldom wait for each other.
 */
const ID_BUCKETS = 64;
const FOR_UPDATE = sql.raw('FOR UPDATE');
const FOR_NO_KEY_UPDATE = sql.raw('FOR NO KEY UPDATE');

export const postgresAdapter: Adapter = {
  name: 'postgres',
  // Rows are locked, not the database: a shorter batch only costs the import rate (ADR 36).
  importBatchLines: 1000,
  exportPageRows: 5000,
  scanSliceRows: null,
  limitPlaceholder: '?',
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
  async tableKeys(db) {
    const { rows } = await sql<TableKeyRow>`
      SELECT c.conrelid::regclass::text AS "table", a.attname AS "column", k.n::int AS pk, NULL AS parent
        FROM pg_constraint c CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
        WHERE c.contype = 'p' AND c.connamespace = current_schema()::regnamespace
      UNION ALL
      SELECT c.conrelid::regclass::text, NULL, 0, c.confrelid::regclass::text
        FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace
      ORDER BY 1, 3`.execute(db);
    return tableKeysOf(rows);
  },
  // A notification is sent when (and only if) the writing transaction commits, to every session
  // listening on the channel; identical payloads of one transaction are sent once.
  async createAuthChangeSignals(db) {
    await sql
      .raw(`CREATE FUNCTION wsops_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('${AUTH_CHANNEL}', '*');
        ELSIF TG_TABLE_NAME = 'api_keys' THEN
          PERFORM pg_notify('${AUTH_CHANNEL}', 'key:' || OLD.key_id);
        ELSE
          PERFORM pg_notify('${AUTH_CHANNEL}', 'workspace:' || OLD.id);
        END IF;
        RETURN NULL;
      END $$`)
      .execute(db);
    for (const [table, columns] of [
      ['api_keys', KEY_COLUMNS],
      ['workspaces', WORKSPACE_COLUMNS],
    ] as const) {
      await sql.raw(updateTrigger(table, columns)).execute(db);
      await sql
        .raw(`CREATE TRIGGER ${table}_auth_delete AFTER DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION wsops_auth_changed()`)
        .execute(db);
      await sql
        .raw(`CREATE TRIGGER ${table}_auth_truncate AFTER TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION wsops_auth_changed()`)
        .execute(db);
    }
  },
  async watchKeyColumns(db, columns) {
    await sql`DROP TRIGGER api_keys_auth_update ON api_keys`.execute(db);
    await sql.raw(updateTrigger('api_keys', columns)).execute(db);
  },
  ...postgresQueue,
  ...postgresDocFields,
};

const updateTrigger = (
  table: string,
  columns: readonly string[],
) => `CREATE TRIGGER ${table}_auth_update AFTER UPDATE ON ${table} FOR EACH ROW
        WHEN (${changedColumns(columns, 'IS DISTINCT FROM')}) EXECUTE FUNCTION wsops_auth_changed()`;

export function openPostgres(url: string, logger: Logger | undefined): Omit<Database, 'storage'> {
  const pool = new (pgDriver().Pool)({ connectionString: url, max: POOL_SESSIONS, application_name: 'wsops' });
  heedLostSessions(pool, logger);
  // Jobs written through either pool are announced after their commit (postgres-jobs.ts).
  const announcer = new JobAnnouncer(url, logger?.child({ component: 'database' }));
  const db = new Kysely<DB>({ dialect: announcingDialect(new PostgresDialect({ pool: preparingPool(pool) }), announcer) });
  // Opened at the first delivery query: API-only processes and CLI commands never open these.
  const deliveryPool = new (pgDriver().Pool)({ connectionString: url, max: DELIVERY_SESSIONS, application_name: 'wsops-worker' });
  heedLostSessions(deliveryPool, logger);
  const deliveries = new Kysely<DB>({ dialect: announcingDialect(new PostgresDialect({ pool: deliveryPool }), announcer) });
  const hot = postgresHotQueries(pool);
  const engine: Engine = {
    ...postgresAdapter,
    hot,
    // Pages on generic-plan sessions of their own (ADR 18); their searches on the main pool.
    openPages: (log) => new PostgresPages(pageSessions(url, PAGE_SESSIONS, hot, log), snapshotCurrency(hot, log)),
    readCommitted: async <R>(query: string | RawBuilder<R>) =>
      (await (typeof query === 'string' ? sql.raw<R>(query) : query).execute(db)).rows,
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
    actionStatements: postgresActionStatements,
    authChanges: (invalidate, log) => new AuthListener(url, invalidate, log.child({ component: 'key-cache' })),
    writeRecords: (fn) =>
      db.transaction().execute(async (trx) => {
        // Every lookup by a batch's ids is a LATERAL probe per id (LIMIT 1 keeps the planner from
        // flattening it): one primary-key lookup each, whatever the statistics say. `id = ANY($ids)`,
        // and a plain join with unnest(), were planned on a table not yet analyzed (any table being
        // imported into) as a scan of the whole workspace, a cost per batch growing with the
        // table: the import's decay (ADR 36).
        return fn({
          db: trx,
          async current(workspaceId, ids, lock) {
            // Locks in id order (the order of the ids given), as the upsert below does. A delete's
            // FOR UPDATE waits for every write holding a reference to the row (existing() below)
            // and makes new ones wait; a write's NO KEY UPDATE (what its upsert, which keeps the
            // key, takes anyway) leaves them alone (ADR 43, "Under concurrency").
            const sorted = [...ids].sort();
            // An id not stored yet has no row to lock: two writers of it would each find it absent and
            // create it, the later overwriting the earlier (If-None-Match: * passing twice, two imports
            // of one file disagreeing on created_at). Every writer of an id, stored or not, first takes
            // a transaction-level advisory lock on the id's bucket (at most ID_BUCKETS per transaction,
            // whatever the batch), in bucket order and before any row lock, so they take turns.
            await sql`SELECT pg_advisory_xact_lock(hashtext(${workspaceId}), b) FROM (SELECT DISTINCT abs(hashtext(k.id) % ${ID_BUCKETS}) AS b
              FROM unnest(${sorted}::text[]) AS k(id) ORDER BY b) x`.execute(trx);
            const { rows } = await sql<StoredRecord>`SELECT r.* FROM unnest(${sorted}::text[]) AS k(id) CROSS JOIN LATERAL (
            SELECT id, register, created_at, updated_at, doc FROM records
            WHERE workspace_id = ${workspaceId} AND id = k.id LIMIT 1 ${lock === 'delete' ? FOR_UPDATE : FOR_NO_KEY_UPDATE}) r`.execute(
              trx,
            );
            return new Map(rows.map((r) => [r.id, r]));
          },
          async existing(workspaceId, ids) {
            // KEY SHARE, as a foreign key's check: a delete of a target waits for this commit and
            // then finds the reference; a target deleted first is not returned (the row this
            // waited for is gone when it is read again). In id order, as every lock of a batch.
            const { rows } = await sql<{ id: string }>`SELECT r.id FROM unnest(${[...ids].sort()}::text[]) AS k(id) CROSS JOIN LATERAL (
            SELECT id FROM records WHERE workspace_id = ${workspaceId} AND id = k.id LIMIT 1 FOR KEY SHARE) r`.execute(trx);
            return new Set(rows.map((r) => r.id));
          },
          async importProgress(p) {
            await sql`UPDATE record_imports SET lines = ${p.lines}, refused = ${p.refused}, report = ${p.report}, alive_at = ${p.aliveAt}
            WHERE id = ${p.id}`.execute(trx);
          },
          async upsert(rows, created) {
            if (rows.length === 0) return;
            // unnest() of one text array per column: one round trip per batch, rows in id order so
            // two concurrent batches lock shared rows in the same order (no deadlock).
            const sorted = [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
            const arrays = COLUMNS.map((c) => sql`${sorted.map((r) => r[c])}::text[]`);
            await sql`INSERT INTO records (${sql.raw(COLUMNS.join(', '))}) SELECT * FROM unnest(${sql.join(arrays)})
          ON CONFLICT (workspace_id, id) DO UPDATE SET ${sql.raw(UPDATED.map((c) => `${c} = excluded.${c}`).join(', '))}`.execute(trx);
            // A record written again under a deleted id leaves the deletions feed (tombstones.ts).
            const rewritten = created ? [...created] : sorted.map((r) => r.id);
            if (rewritten.length) {
              await sql`DELETE FROM record_tombstones WHERE workspace_id = ${sorted[0]?.workspace_id} AND id = ANY(${rewritten}::text[])`.execute(
                trx,
              );
            }
          },
          async naming(workspaceId, ids) {
            // A probe of the reverse index per id, then a primary-key probe per referrer (as current() does).
            const { rows } = await sql<StoredRecord>`SELECT r.* FROM (SELECT DISTINCT x.source_id FROM unnest(${[...ids]}::text[]) AS k(id)
            CROSS JOIN LATERAL (SELECT source_id FROM record_refs WHERE workspace_id = ${workspaceId} AND target_id = k.id) x) s
            CROSS JOIN LATERAL (SELECT id, register, created_at, updated_at, doc FROM records
            WHERE workspace_id = ${workspaceId} AND id = s.source_id LIMIT 1) r`.execute(trx);
            return rows;
          },
          async delete(workspaceId, ids, now) {
            if (ids.length === 0) return;
            // The rows were locked by current(): their ctids cannot move before commit.
            const { rows: gone } = await sql<{ id: string; register: string; updated_at: string }>`DELETE FROM records
            WHERE ctid = ANY(ARRAY(SELECT r.ctid FROM unnest(${[...ids]}::text[]) AS k(id) CROSS JOIN LATERAL (
            SELECT ctid FROM records WHERE workspace_id = ${workspaceId} AND id = k.id LIMIT 1) r))
            RETURNING id, register, updated_at`.execute(trx);
            if (gone.length === 0) return;
            // In id order, as every write of a batch locks its rows.
            gone.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
            await sql`INSERT INTO record_tombstones (workspace_id, id, register, deleted_at)
            SELECT ${workspaceId}, * FROM unnest(${gone.map((g) => g.id)}::text[], ${gone.map((g) => g.register)}::text[],
              ${gone.map((g) => deletedAtOf(g.updated_at, now))}::text[])
            ON CONFLICT (workspace_id, id) DO UPDATE SET register = excluded.register, deleted_at = excluded.deleted_at`.execute(trx);
          },
        });
      }),
  };
  return {
    db,
    deliveries,
    dialect: 'postgres',
    engine,
    async close() {
      await deliveries.destroy();
      await db.destroy();
      await announcer.close();
    },
  };
}
