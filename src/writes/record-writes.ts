/**
 * The system of record's writes of one record (PUT, PATCH, DELETE on the internal listener):
 * direct writes, which move updated_at and emit no event (ADR 20). Each is one short
 * transaction that reads the stored row, checks the precondition, and writes.
 */

import type { Kysely } from '#kysely';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { REGISTERS, registerByPath } from '../registers/catalogue.js';
import type { Register } from '../registers/define.js';
import { idPattern, idRule } from '../registers/fields.js';
import { type FieldProblem, type RecordObject, readRecordInput } from '../registers/record-input.js';
import type { Database } from '../store/database.js';
import { writeAgainOnDeadlock } from '../store/record-batches.js';
import type { DB } from '../store/schema.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { changeOf, danglingProblem, etagOf, knownReferences, referenceKey, referencesIn } from './record-changes.js';
import { assertUnreferenced, fieldOf } from './referrers.js';

/** What this file takes of the services built at start (services.ts). */
export interface RecordWritesServices {
  database: Database;
  clock: Clock;
}

export interface Preconditions {
  /** `If-Match`: the write happens only if the stored record's ETag is one of these (or `*`: it exists). */
  ifMatch?: string;
  /** `If-None-Match: *`: create only. */
  ifNoneMatch?: string;
}

export interface WriteResult {
  /** The stored record's JSON, exactly as /api/v1 returns it. */
  doc: string;
  etag: string;
  created: boolean;
}

/** The register named by a path segment, or 404 naming the registers there are. */
export function registerNamed(path: string): Register {
  const register = registerByPath(path);
  if (!register)
    throw new AppError('not_found', `No register "${path.slice(0, 60)}"; registers are: ${REGISTERS.map((r) => r.path).join(', ')}.`);
  return register;
}

/** The id in a path, checked before any query. */
export function checkId(register: Register, id: string): void {
  if (!idPattern(register.idPrefix).test(id)) {
    throw new AppError('invalid_parameter', `The id must be ${idRule(register.idPrefix)}.`, {
      param: 'id',
    });
  }
}

export function invalidRecord(problems: readonly FieldProblem[]): AppError {
  const first = problems[0] as FieldProblem;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more in \`errors\`)` : '';
  return new AppError('invalid_record', `${first.pointer || 'the body'} ${first.detail}${more}`, {
    pointer: first.pointer,
    errors: problems,
  });
}

function checkPreconditions(p: Preconditions, current: { updated_at: string } | undefined): void {
  if (p.ifNoneMatch !== undefined && p.ifNoneMatch.trim() === '*' && current) {
    throw new AppError('precondition_failed', 'If-None-Match: * asks to create only, and the record exists.');
  }
  if (p.ifMatch === undefined) return;
  const tags = p.ifMatch.split(',').map((t) => t.trim());
  if (tags.includes('*') ? !current : !current || !tags.includes(etagOf(current.updated_at))) {
    throw new AppError(
      'precondition_failed',
      current
        ? `The record has moved on: its ETag is now ${etagOf(current.updated_at)}. Read it again, then retry your change.`
        : 'If-Match names a version, and the record does not exist.',
    );
  }
}

/** Strips stamps and derived fields of a stored record: what a merge patch applies to. */
function writable(register: Register, doc: RecordObject): RecordObject {
  const out: RecordObject = { ...doc };
  delete out.created_at;
  delete out.updated_at;
  for (const name of Object.keys(register.derived ?? {})) delete out[name];
  return out;
}

/**
 * JSON Merge Patch (RFC 7396): null removes a member, objects merge, anything else replaces.
 * Members are defined, never assigned, and only own members are merged into: assigning a key
 * `__proto__` would replace the prototype of the object built, and reading one would merge into
 * Object.prototype. Such a key stays an ordinary member, which the register's validation refuses
 * as an unknown field like any other undeclared name (the listeners refuse it even earlier).
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: RecordObject = typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as RecordObject) } : {};
  for (const [k, v] of Object.entries(patch as RecordObject)) {
    if (v === null) delete out[k];
    else {
      const value = mergePatch(Object.hasOwn(out, k) ? out[k] : undefined, v);
      Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

async function write(
  services: RecordWritesServices,
  workspaceId: string,
  register: Register,
  id: string,
  preconditions: Preconditions,
  body: (current: RecordObject | undefined) => unknown,
  mustExist: boolean,
  alongside?: WriteAlongside,
): Promise<WriteResult> {
  checkId(register, id);
  await getWorkspace(services.database.db, workspaceId);
  // Run again if PostgreSQL picks it as a deadlock's victim: it (and `alongside`, which must
  // therefore work only in its transaction) only reads and writes the database.
  return writeAgainOnDeadlock(services.database.engine, async (batch) => {
    const current = (await batch.current(workspaceId, [id], 'write')).get(id);
    if (mustExist && !current) throw new AppError('not_found', `No ${register.resource} ${id} in workspace ${workspaceId}.`);
    checkPreconditions(preconditions, current);
    const input = readRecordInput(register, body(current ? (JSON.parse(current.doc) as RecordObject) : undefined), { id });
    if (!input.ok) throw invalidRecord(input.problems);
    // Judged on what the write changes: a reference the stored record already makes (perhaps
    // dangling, in data written before deletes were checked or copied in) is not judged again.
    const before = current ? knownReferences(register, current.doc) : new Set<string>();
    const refs = referencesIn(register, input.record).filter((r) => !before.has(referenceKey(fieldOf(r.pointer), r.id)));
    if (refs.length) {
      const present = await batch.existing(workspaceId, [...new Set(refs.map((r) => r.id))]);
      const dangling = refs.filter((r) => !present.has(r.id)).map((r) => danglingProblem(r.pointer, r.id));
      if (dangling.length) throw invalidRecord(dangling);
    }
    const change = changeOf(workspaceId, register, input.record, current, services.clock());
    if (change.changed) await batch.upsert([change.row]);
    await alongside?.(batch.db, current !== undefined);
    return { doc: change.row.doc, etag: etagOf(change.row.updated_at), created: change.created };
  });
}

/**
 * Rows that commit with a record write, in its transaction, after the record (SCIM's link beside
 * a person): `existed` tells whether the record was stored before. A throw rolls the record back too.
 */
export type WriteAlongside = (db: Kysely<DB>, existed: boolean) => Promise<void>;

/** PUT: creates (created: true) or replaces a whole record. */
export function putRecord(
  services: RecordWritesServices,
  workspaceId: string,
  register: Register,
  id: string,
  body: unknown,
  p: Preconditions = {},
  alongside?: WriteAlongside,
) {
  return write(services, workspaceId, register, id, p, () => body, false, alongside);
}

/** PATCH: a JSON merge patch of a stored record (a correction, `wsops correct`, is one too). */
export function patchRecord(
  services: RecordWritesServices,
  workspaceId: string,
  register: Register,
  id: string,
  patch: unknown,
  p: Preconditions = {},
  alongside?: WriteAlongside,
) {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw invalidRecord([{ pointer: '', code: 'invalid_type', detail: 'must be a JSON object: a merge patch of the record (RFC 7396)' }]);
  }
  return write(services, workspaceId, register, id, p, (current) => mergePatch(writable(register, current ?? {}), patch), true, alongside);
}

/** DELETE: the record leaves every list and detail; no event. Refused (409) while other records name it. */
export async function deleteOne(
  services: RecordWritesServices,
  workspaceId: string,
  register: Register,
  id: string,
  p: Preconditions = {},
): Promise<void> {
  checkId(register, id);
  await getWorkspace(services.database.db, workspaceId);
  // Run again if PostgreSQL picks it as a deadlock's victim: it only reads and writes the database.
  await writeAgainOnDeadlock(services.database.engine, async (batch) => {
    // Locked FOR UPDATE before its referrers are read: a write naming it either committed
    // first (and is found) or waits for this commit (and finds it gone).
    const current = (await batch.current(workspaceId, [id], 'delete')).get(id);
    if (!current) throw new AppError('not_found', `No ${register.resource} ${id} in workspace ${workspaceId}.`);
    checkPreconditions(p, current);
    await assertUnreferenced(batch, workspaceId, id);
    // The same call writes the record's tombstone (the deletions feed), in this transaction.
    await batch.delete(workspaceId, [id], services.clock());
  });
}
