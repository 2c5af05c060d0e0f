/**
 * The few statements of a system-of-record write: read the current rows of a batch of ids
 * (locking them on PostgreSQL), upsert rows, delete ids. Each dialect writes them its own way
 * (`writeRecords` in dialects/sqlite.ts and dialects/postgres.ts), inside one short
 * transaction; the caller never awaits a client while it is open.
 */
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
  upsert(rows: readonly RecordsTable[]): Promise<void>;
  delete(workspaceId: string, ids: readonly string[]): Promise<void>;
}

/** The columns of a record row, and those an upsert of an existing record replaces. */
export const COLUMNS = RECORD_COLUMNS;
export const UPDATED = COLUMNS.filter((c) => c !== 'id' && c !== 'workspace_id' && c !== 'created_at');

/** Rows (or lines) handled between two turns of the event loop during a batch. */
export const YIELD_EVERY = 100;
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
