import { recordAudit } from '../audit/audit.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { Field } from '../registers/fields.js';
import { resolveRegister } from '../registers/resolve-register.js';
import { assertValidRecord } from '../registers/validate.js';
import type { Database } from '../store/database.js';
import { nextStamp } from '../writes/next-stamp.js';
import type { RecordObject, RecordStore } from '../writes/records.js';
import { assertUnreferenced } from '../writes/referrers.js';

/** What this file takes of the services built at start (services.ts). */
export interface CorrectServices {
  database: Database;
  records: RecordStore;
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
  const changes: RecordObject = {};
  for (const a of assignments) {
    const eq = a.indexOf('=');
    if (eq <= 0) throw new AppError('invalid_parameter', `"${a}" is not field=value`);
    const name = a.slice(0, eq);
    const field = register.fields[name];
    if (IMMUTABLE.has(name)) throw new AppError('invalid_parameter', `${name} cannot be corrected`);
    if (!field) {
      throw new AppError(
        'invalid_parameter',
        `${register.path} has no field "${name}"; fields are: ${Object.keys(register.fields).join(', ')}`,
      );
    }
    if (register.derived?.[name])
      throw new AppError('invalid_parameter', `${name} is derived and is recomputed from the fields it depends on`);
    changes[name] = parseValue(name, field, a.slice(eq + 1));
  }
  const db = services.database.db;
  return db.transaction().execute(async (trx) => {
    const current = await services.records.get(workspaceId, register, id, trx);
    if (!current) throw new AppError('not_found', `no ${register.resource} ${id} in workspace ${workspaceId}`);
    const now = services.clock();
    const updated = register.withDerived({ ...current, ...changes, updated_at: nextStamp(current.updated_at as string, now) });
    assertValidRecord(register, updated);
    await services.records.put(workspaceId, register, updated, trx);
    await recordAudit(trx, {
      workspaceId,
      at: new Date(now).toISOString(),
      actor: 'cli',
      action: 'record.corrected',
      target: id,
      detail: { register: register.path, fields: Object.keys(changes) },
    });
    return updated;
  });
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
