/**
 * The few statements of a system-of-record write: read the current rows of a batch of ids
 * (locking them on PostgreSQL), upsert rows, delete ids. Each dialect writes them its own way
 * (`writeRecords` in dialects/sqlite.ts and dialects/postgres.ts), inside one short
 * transaction; the caller never awaits a client while it is open.
 */
import type { Kysely } from '#kysely';
import { type DB, RECORD_COLUMNS, type RecordsTable } from './schema.js';

/** The current state of a stored record, as a batch needs it. */
export interface StoredRecord {
  id: string;
  register: string;
  created_at: string;
  updated_at: string;
  doc: string;
}

export interface RecordBatch {
  /** The transaction itself, for rows that must commit with the records (SCIM's link beside a person). */
  readonly db: Kysely<DB>;
  /**
   * The stored rows among `ids`. PostgreSQL locks them until commit, in id order, as `lock` says
   * (ADR 43, "Under concurrency"): 'delete' (FOR UPDATE) when the transaction may delete any of
   * them, so that no write can name them meanwhile; 'write' (FOR NO KEY UPDATE) when it only
   * writes them, which leaves writes naming them free. SQLite's one writer needs neither.
   */
  current(workspaceId: string, ids: readonly string[], lock: RowLock): Promise<Map<string, StoredRecord>>;
  /**
   * Which of `ids` exist in the workspace. PostgreSQL locks those it finds FOR KEY SHARE until
   * commit: the reference the caller is about to write to them holds them as a foreign key
   * would, so a delete of one waits for this commit (and then finds the reference).
   */
  existing(workspaceId: string, ids: readonly string[]): Promise<Set<string>>;
  /**
   * Writes rows (insert or replace). `created`: the ids among them that were absent when this
   * transaction read them (current()); SQLite indexes their search words in one statement. A
   * row written under a deleted id removes that id's tombstone (with `created`, only those ids
   * are looked for).
   */
  upsert(rows: readonly RecordsTable[], created?: ReadonlySet<string>): Promise<void>;
  /**
   * The stored rows that name any of `ids` by a reference field: a lookup in the reverse index
   * of references (migration 0027), one per id.
   */
  naming(workspaceId: string, ids: readonly string[]): Promise<StoredRecord[]>;
  /**
   * Deletes `ids`, which must have been read (and so locked) by current() in this transaction,
   * and writes each deleted record's tombstone (the deletions feed), deleted at `now` (ms).
   */
  delete(workspaceId: string, ids: readonly string[], now: number): Promise<void>;
  /** Records an import's progress in its `record_imports` row, committed with this batch. */
  importProgress(progress: ImportProgress): Promise<void>;
}

/** How current() locks the rows it reads: for a transaction that may delete them, or only writes them. */
export type RowLock = 'delete' | 'write';

/** PostgreSQL's SQLSTATE when it ended a transaction to break a deadlock (deadlock_detected). */
const DEADLOCK = '40P01';
export const isDeadlock = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { code?: unknown }).code === DEADLOCK;
/** Runs of a single-record write whose transaction PostgreSQL ended as a deadlock's victim. */
const DEADLOCK_RUNS = 3;

/**
 * `engine.writeRecords(fn)`, run again when PostgreSQL ended its transaction to break a deadlock:
 * the victim was rolled back whole, so an `fn` that only reads and writes through its batch can
 * run again. Not for the import, whose batches change state outside the database.
 */
export async function writeAgainOnDeadlock<T>(
  engine: { writeRecords<R>(fn: (batch: RecordBatch) => Promise<R>): Promise<R> },
  fn: (batch: RecordBatch) => Promise<T>,
): Promise<T> {
  for (let run = 1; ; run++) {
    try {
      return await engine.writeRecords(fn);
    } catch (err) {
      if (!isDeadlock(err) || run >= DEADLOCK_RUNS) throw err;
    }
  }
}

/** What an import has applied once the batch that carries it commits. */
export interface ImportProgress {
  id: string;
  lines: number;
  refused: number;
  /** The report so far, as JSON. */
  report: string;
  aliveAt: string;
}

/** The columns of a record row, and those an upsert of an existing record replaces. */
export const COLUMNS = RECORD_COLUMNS;
export const UPDATED = COLUMNS.filter((c) => c !== 'id' && c !== 'workspace_id' && c !== 'created_at');
/** The insert-or-replace of one record row, its values COLUMNS in order, `placeholder(i)` the i-th (from 0). */
export const upsertOneSql = (placeholder: (i: number) => string): string =>
  `INSERT INTO records (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((_, i) => placeholder(i)).join(', ')})
  ON CONFLICT (workspace_id, id) DO UPDATE SET ${UPDATED.map((c) => `${c} = excluded.${c}`).join(', ')}`;
/** New rows indexed for search per statement on SQLite: small enough that one statement is a short turn. */
export const INDEX_SLICE_ROWS = 100;

/**
 * How long an import works on the event loop before it lets other requests have a turn. Rows
 * vary in cost, so a fixed count of rows is a turn of varying length; time is what a waiting
 * request feels, and a request needs several turns (read, authenticate, query, write): every
 * turn it waits one slice. Shorter slices cut the list pages' p99 during an import without
 * slowing the import (ADR 36 has the figures).
 */
export const SLICE_MS = 0.25;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
let sliceStart = performance.now();
/** Whether the current slice of work has run SLICE_MS: then `await nextSlice()` (checked per row). */
export const sliceUsed = (): boolean => performance.now() - sliceStart >= SLICE_MS;
export async function nextSlice(): Promise<void> {
  await yieldToEventLoop();
  sliceStart = performance.now();
}
