/**
 * How one written record becomes a stored row, shared by the single-record routes and the
 * import: the stamps (created_at kept, updated_at moved forward only when something changed)
 * and the references check.
 */

import { registerByPrefix } from '../registers/catalogue.js';
import type { Register } from '../registers/define.js';
import { type FieldProblem, type RecordObject, referencesOf } from '../registers/record-input.js';
import type { StoredRecord } from '../store/record-batches.js';
import type { RecordsTable } from '../store/schema.js';
import { nextStamp } from './next-stamp.js';
import { type RowParts, rowOf, rowParts, type Stamps } from './records.js';
import { namedBy } from './referrers.js';

const isRegisterPrefix = (prefix: string) => registerByPrefix(prefix) !== undefined;

/** The references of a record to other records (people, locations...), by JSON pointer. */
export function referencesIn(register: Register, record: RecordObject): { pointer: string; id: string }[] {
  return referencesOf(register, record, isRegisterPrefix).filter((r) => r.id !== record.id);
}

/** A reference as a key: its field (list indexes left out) and the id it names. */
export const referenceKey = (field: string, id: string): string => `${field} ${id}`;

/** The references a stored record already makes, as referenceKey()s. */
export function knownReferences(register: Register, doc: string): Set<string> {
  return new Set(namedBy(register, JSON.parse(doc) as RecordObject).map((r) => referenceKey(r.field, r.id)));
}

export function danglingProblem(pointer: string, id: string): FieldProblem {
  return {
    pointer,
    code: 'dangling_reference',
    detail: `names ${id}, which is not a record of this workspace; write it first (in an import, anywhere in the same file)`,
  };
}

export interface Change {
  row: RecordsTable;
  /** false when the stored record is already exactly this one: nothing is written, updated_at does not move. */
  changed: boolean;
  created: boolean;
}

/**
 * The row to store for `record` (checked, without stamps unless `keepTimestamps`) given what is
 * stored now. An identical record changes nothing, so a repeated import is idempotent.
 * `parts`: the record's row without stamps (rowParts), when the caller built it already.
 */
export function changeOf(
  workspaceId: string,
  register: Register,
  record: RecordObject,
  current: StoredRecord | undefined,
  now: number,
  keepTimestamps = false,
  parts: RowParts = rowParts(register, record),
): Change {
  if (keepTimestamps) {
    const row = rowOf(workspaceId, parts, record as Partial<Stamps>);
    return { row, changed: row.doc !== current?.doc, created: !current };
  }
  if (current) {
    const same = rowOf(workspaceId, parts, current);
    if (same.doc === current.doc) return { row: same, changed: false, created: false };
    const stamps = { created_at: current.created_at, updated_at: nextStamp(current.updated_at, now) };
    return { row: rowOf(workspaceId, parts, stamps), changed: true, created: false };
  }
  const stamp = stampOf(now);
  return { row: rowOf(workspaceId, parts, { created_at: stamp, updated_at: stamp }), changed: true, created: true };
}

/** `now` as an ISO instant; the last one is kept, since an import batch stamps all its new records with one `now`. */
let lastStamp = { now: Number.NaN, iso: '' };
function stampOf(now: number): string {
  if (now !== lastStamp.now) lastStamp = { now, iso: new Date(now).toISOString() };
  return lastStamp.iso;
}

/** The strong entity tag of a stored record: its updated_at, which moves on every write. */
export function etagOf(updatedAt: string): string {
  return `"${updatedAt}"`;
}
