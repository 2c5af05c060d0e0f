/**
 * The few statements of a system-of-record write, per dialect: read the current rows of a batch
 * of ids (locking them on PostgreSQL), upsert rows, delete ids. Each runs inside one short
 * transaction opened by `writeTransaction`; the caller never awaits a client while it is open.
 */
import { sql } from 'kysely';
import { type Database, preparedStatement } from './database.js';
import { RECORD_COLUMNS, type RecordsTable } from './schema.js';

/** The current state of a stored record, as a batch needs it. */
export interface StoredRecord {
  id: string;
  register: string;
  created_at: string;
  updated_at: string;
  doc: string;
}

export interface RecordBatch {
  /** The stored rows among `ids` (PostgreSQL locks them until commit, in id order). */
  current(workspaceId: string, ids: readonly string[]): Promise<Map<string, StoredRecord>>;
  /** Which of `ids` exist in the workspace. */
  existing(workspaceId: string, ids: readonly string[]): Promise<Set<string>>;
  /**
   * Writes rows (insert or replace). `created`: the ids among them that were absent when this
   * transaction read them (current()); SQLite indexes their search words in one statement.
   */
  upsert(rows: readonly RecordsTable[], created?: ReadonlySet<string>): Promise<void>;
  /** Deletes `ids`, which must have been read (and so locked) by current() in this transaction. */
  delete(workspaceId: string, ids: readonly string[]): Promise<void>;
}

const COLUMNS = RECORD_COLUMNS;
/** New rows indexed for search per statement (~1 ms each). */
const INDEX_SLICE_ROWS = 100;
const UPDATED = COLUMNS.filter((c) => c !== 'id' && c !== 'workspace_id' && c !== 'created_at');

/**
 * How long an import works on the event loop before it lets other requests have a turn. Rows
 * cost 15-60 µs each, so a fixed count of rows was anything from 2 to 8 ms, and a request needs
 * several turns (read, authenticate, query, write): every turn it waited one slice.
 */
export const SLICE_MS = 1;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
let sliceStart = performance.now();
/** Whether the current slice of work has run SLICE_MS: then `await nextSlice()` (checked per row). */
export const sliceUsed = (): boolean => performance.now() - sliceStart >= SLICE_MS;
export async function nextSlice(): Promise<void> {
  await yieldToEventLoop();
  sliceStart = performance.now();
}

/** Runs `fn` in one write transaction (SQLite: BEGIN IMMEDIATE, so writers queue rather than fail). */
export async function writeTransaction<T>(database: Database, fn: (batch: RecordBatch) => Promise<T>): Promise<T> {
  return database.db.transaction().execute(async (trx) => {
    const { sqlite } = database;
    if (sqlite) {
      // The Kysely transaction holds the one writer connection; the raw statements below run on
      // that same connection, inside it, without a round trip each.
      const upsert = preparedStatement(
        sqlite,
        `INSERT INTO records (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})
         ON CONFLICT (workspace_id, id) DO UPDATE SET ${UPDATED.map((c) => `${c} = excluded.${c}`).join(', ')}`,
      );
      const current = preparedStatement(
        sqlite,
        'SELECT id, register, created_at, updated_at, doc FROM records WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))',
      );
      const existing = preparedStatement(
        sqlite,
        'SELECT id FROM records WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))',
      );
      const remove = preparedStatement(sqlite, 'DELETE FROM records WHERE workspace_id = ? AND id = ?');
      // Migration 0024: while the flag row exists (only inside this transaction), the insert
      // trigger leaves the search index alone and one statement indexes the batch's new rows.
      const deferIndex = preparedStatement(sqlite, 'INSERT INTO records_fts_deferred (deferred) VALUES (1)');
      const undeferIndex = preparedStatement(sqlite, 'DELETE FROM records_fts_deferred');
      const indexNew = preparedStatement(
        sqlite,
        `INSERT INTO records_fts (rowid, search_text) SELECT rowid, search_text FROM records
         WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?))`,
      );
      return fn({
        async current(workspaceId, ids) {
          const rows = current.all(workspaceId, JSON.stringify(ids)) as StoredRecord[];
          return new Map(rows.map((r) => [r.id, r]));
        },
        async existing(workspaceId, ids) {
          return new Set((existing.all(workspaceId, JSON.stringify(ids)) as { id: string }[]).map((r) => r.id));
        },
        async upsert(rows, created) {
          const workspaceId = rows[0]?.workspace_id;
          // One row is cheaper with the trigger (no flag to write); a batch's new rows are not.
          const byBatch = workspaceId !== undefined && created !== undefined && created.size > 1;
          if (byBatch) deferIndex.run();
          // Each row costs ~15-30 µs (its indexes, the search index): the event loop serves
          // requests between slices, so a batch never holds it for more than SLICE_MS.
          for (const r of rows) {
            upsert.run(...COLUMNS.map((c) => r[c]));
            if (sliceUsed()) await nextSlice();
          }
          if (byBatch) {
            // In slices too: 1,000 rows in one statement held the event loop ~10 ms.
            const ids = [...created];
            for (let i = 0; i < ids.length; i += INDEX_SLICE_ROWS) {
              indexNew.run(workspaceId, JSON.stringify(ids.slice(i, i + INDEX_SLICE_ROWS)));
              if (sliceUsed()) await nextSlice();
            }
            undeferIndex.run();
          }
        },
        async delete(workspaceId, ids) {
          for (const id of ids) remove.run(workspaceId, id);
        },
      });
    }
    // Every lookup by a batch's ids is a LATERAL probe per id (LIMIT 1 keeps the planner from
    // flattening it): one primary-key lookup each, whatever the statistics say. `id = ANY($ids)`,
    // and a plain join with unnest(), were planned on a table not yet analyzed (any table being
    // imported into) as a scan of the whole workspace: 107 ms per batch at 200,000 records and
    // growing with the table, the import's decay (ADR 36).
    return fn({
      async current(workspaceId, ids) {
        // Locks in id order (the order of the ids given), as the upsert below does.
        const sorted = [...ids].sort();
        const { rows } = await sql<StoredRecord>`SELECT r.* FROM unnest(${sorted}::text[]) AS k(id) CROSS JOIN LATERAL (
            SELECT id, register, created_at, updated_at, doc FROM records
            WHERE workspace_id = ${workspaceId} AND id = k.id LIMIT 1 FOR UPDATE) r`.execute(trx);
        return new Map(rows.map((r) => [r.id, r]));
      },
      async existing(workspaceId, ids) {
        const { rows } = await sql<{ id: string }>`SELECT r.id FROM unnest(${[...ids]}::text[]) AS k(id) CROSS JOIN LATERAL (
            SELECT id FROM records WHERE workspace_id = ${workspaceId} AND id = k.id LIMIT 1) r`.execute(trx);
        return new Set(rows.map((r) => r.id));
      },
      async upsert(rows) {
        if (rows.length === 0) return;
        // unnest() of one text array per column: one round trip per batch, rows in id order so
        // two concurrent batches lock shared rows in the same order (no deadlock).
        const sorted = [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const arrays = COLUMNS.map((c) => sql`${sorted.map((r) => r[c])}::text[]`);
        await sql`INSERT INTO records (${sql.raw(COLUMNS.join(', '))}) SELECT * FROM unnest(${sql.join(arrays)})
          ON CONFLICT (workspace_id, id) DO UPDATE SET ${sql.raw(UPDATED.map((c) => `${c} = excluded.${c}`).join(', '))}`.execute(trx);
      },
      async delete(workspaceId, ids) {
        if (ids.length === 0) return;
        // The rows were locked by current(): their ctids cannot move before commit.
        await sql`DELETE FROM records WHERE ctid = ANY(ARRAY(SELECT r.ctid FROM unnest(${[...ids]}::text[]) AS k(id) CROSS JOIN LATERAL (
            SELECT ctid FROM records WHERE workspace_id = ${workspaceId} AND id = k.id LIMIT 1) r))`.execute(trx);
      },
    });
  });
}
