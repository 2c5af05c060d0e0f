import { recordAudit } from '../audit/audit.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { Field } from '../registers/fields.js';
import { resolveRegister } from '../registers/resolve-register.js';
import type { Database } from '../store/database.js';
import { patchRecord } from '../writes/record-writes.js';
import type { RecordObject } from '../writes/records.js';
import { assertUnreferenced } from '../writes/referrers.js';

/** What this file takes of the services built at start (services.ts). */
export interface CorrectServices {
  database: Database;
  clock: Clock;
}

const IMMUTABLE = new Set(['id', 'created_at', 'updated_at']);

/** Parses `value` for a declared field: numbers and booleans by the field's type, `null`, JSON for lists. */
function parseValue(name: string, field: Field, raw: string): unknown {
  if (raw === 'null') return null;
  switch (field.kind) {
    case 'integer':
      if (!/^-?\d+$/.test(raw)) throw new AppError('invalid_parameter', `${name} must be a whole number; got "${raw}"`);
      return Number(raw);
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw new AppError('invalid_parameter', `${name} must be true or false; got "${raw}"`);
      return raw === 'true';
    case 'list':
    case 'ids':
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        throw new AppError('invalid_parameter', `${name} must be a JSON array; got "${raw}"`);
      }
    default:
      return raw;
  }
}

/**
 * A direct correction in the underlying data: moves updated_at (so an updated_since walk
 * sees it), recomputes derived fields, and emits no event.
 */
export async function correctRecord(
  services: CorrectServices,
  workspaceId: string,
  registerPath: string,
  id: string,
  assignments: readonly string[],
): Promise<RecordObject> {
  const register = resolveRegister(registerPath);
  if (assignments.length === 0) throw new AppError('invalid_parameter', 'give at least one field=value to correct');
  // No prototype: a field named `__proto__` stays a name the register does not know.
  const changes: RecordObject = Object.create(null);
  for (const a of assignments) {
    const eq = a.indexOf('=');
    if (eq <= 0) throw new AppError('invalid_parameter', `"${a}" is not field=value`);
    const name = a.slice(0, eq);
    const field = Object.hasOwn(register.fields, name) ? register.fields[name] : undefined;
    if (IMMUTABLE.has(name)) throw new AppError('invalid_parameter', `${name} cannot be corrected`);
    if (!field) {
      throw new AppError(
        'invalid_parameter',
        `${register.path} has no field "${name}"; fields are: ${Object.keys(register.fields).join(', ')}`,
      );
    }
    if (register.derived && Object.hasOwn(register.derived, name))
      throw new AppError('invalid_parameter', `${name} is derived and is recomputed from the fields it depends on`);
    changes[name] = parseValue(name, field, a.slice(eq + 1));
  }
  // The checked write path of a PATCH: the record locked, every reference it newly makes checked
  // against a delete in flight, derived fields recomputed, and the audit entry in its transaction.
  const result = await patchRecord(services, workspaceId, register, id, changes, {}, (trx) =>
    recordAudit(trx, {
      workspaceId,
      at: new Date(services.clock()).toISOString(),
      actor: 'cli',
      action: 'record.corrected',
      target: id,
      detail: { register: register.path, fields: Object.keys(changes) },
    }),
  );
  return JSON.parse(result.doc) as RecordObject;
}

export async function deleteRecord(services: CorrectServices, workspaceId: string, registerPath: string, id: string): Promise<void> {
  const register = resolveRegister(registerPath);
  await services.database.engine.writeRecords(async (batch) => {
    const current = (await batch.current(workspaceId, [id], 'delete')).get(id);
    if (current?.register !== register.path) throw new AppError('not_found', `no ${register.resource} ${id} in workspace ${workspaceId}`);
    await assertUnreferenced(batch, workspaceId, id);
    await batch.delete(workspaceId, [id], services.clock());
  });
  await recordAudit(services.database.db, {
    workspaceId,
    at: new Date(services.clock()).toISOString(),
    actor: 'cli',
    action: 'record.deleted',
    target: id,
    detail: { register: register.path },
  });
}
