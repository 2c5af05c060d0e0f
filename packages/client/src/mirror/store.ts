/**
 * Where the mirror keeps its copy: one table per register (named like the register, `-` as
 * `_`), keyed by id, one column per record field (arrays and objects as JSON), plus the
 * `wsops_mirror_state` table (one row per register: watermark, last full walk and the
 * deletions feed's position).
 */
import type { ColumnKind, RegisterDescriptor } from './registers.js';

export type MirrorRecord = Record<string, unknown>;

export interface RegisterState {
  /** Highest `updated_at` seen by a finished walk; null before the first one finished. */
  watermark: string | null;
  /** When the last full walk (with deletion detection) finished, ISO. */
  lastFullAt: string | null;
  /**
   * Highest `deleted_at` of the deletions feed a finished run applied: the feed's position,
   * saved in the same row (one statement) as the watermark; null before any tombstone was seen.
   */
  deletionsSince: string | null;
}

/** A tombstone of the deletions feed, as the mirror applies it. */
export interface MirrorTombstone {
  id: string;
  deleted_at: string;
}

export interface MirrorStore {
  /** Creates missing tables and columns (idempotent). */
  prepare(registers: readonly RegisterDescriptor[]): Promise<void>;
  /** Upserts one page in one transaction, marking each row with the walk's id. */
  upsert(register: RegisterDescriptor, records: readonly MirrorRecord[], walkId: string): Promise<void>;
  /** After a full walk: removes every row the walk did not see; returns how many. */
  removeUnseen(register: RegisterDescriptor, walkId: string): Promise<number>;
  /**
   * Applies one page of tombstones in one transaction: removes each copy whose `updated_at` is
   * older than its tombstone's `deleted_at` (a newer copy was written again after the deletion);
   * returns how many rows it removed.
   */
  applyDeletions(register: RegisterDescriptor, tombstones: readonly MirrorTombstone[]): Promise<number>;
  state(register: RegisterDescriptor): Promise<RegisterState>;
  saveState(register: RegisterDescriptor, state: RegisterState): Promise<void>;
  /** Every row of a register, as the API's record shape (for checks and tests). */
  records(register: RegisterDescriptor): Promise<MirrorRecord[]>;
  close(): Promise<void>;
}

export const STATE_TABLE = 'wsops_mirror_state';
/** Marks which walk last wrote a row; a full walk removes rows it did not mark. */
export const SEEN_COLUMN = '_wsops_walk';

export function tableName(register: RegisterDescriptor): string {
  return register.path.replace(/-/g, '_');
}

export function quote(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected identifier ${JSON.stringify(name)}`);
  return `"${name}"`;
}

/** A record's value as stored in a column of that kind. */
export function toColumn(kind: ColumnKind, value: unknown, booleanAsInteger: boolean): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'json') return JSON.stringify(value);
  if (kind === 'boolean' && booleanAsInteger) return value ? 1 : 0;
  return value;
}

/** A column's value back as the record had it. */
export function fromColumn(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (kind === 'json') return typeof value === 'string' ? JSON.parse(value) : value;
  if (kind === 'boolean') return value === true || value === 1;
  if (kind === 'integer') return Number(value);
  return value;
}
