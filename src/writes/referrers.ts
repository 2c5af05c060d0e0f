/**
 * Referential integrity on delete: which stored records still name a record that is about to be
 * deleted. The reference fields are the register declarations' `f.id(prefix)` and
 * `f.ids(prefix)` whose prefix is a register's (nested list items included), so a new register
 * gets the rule from its declaration alone.
 *
 * The reverse lookup reads the index of references (`record_refs`, kept by triggers from each
 * row's `refs`, migration 0027) and confirms each referrer against its declaration, which also
 * names the field. It runs only when something is deleted (ADR 43).
 */
import { AppError } from '../errors.js';
import { REGISTERS, registerByPath, registerByPrefix } from '../registers/catalogue.js';
import type { Register } from '../registers/define.js';
import type { Field } from '../registers/fields.js';
import { type RecordObject, referencesOf } from '../registers/record-input.js';
import type { RecordBatch } from '../store/record-batches.js';

/** Ids listed per register and field in a refusal (all are counted). */
export const REFERRER_IDS_LISTED = 10;

/** One reference of a stored record to another: the referring record, its register and field. */
export interface Referrer {
  register: string;
  field: string;
  id: string;
}

/** The referrers of a record, per register and field: how many, and the first ids. */
export interface ReferrerGroup {
  register: string;
  field: string;
  count: number;
  ids: string[];
}

/** A reference field of a register: `manager_id`, `approvers[].person_id`, `held_asset_ids`. */
export interface ReferenceField {
  register: string;
  field: string;
  /** The register it names. */
  names: string;
}

/** Every reference field of every register, from the declarations. */
export function referenceFields(registers: readonly Register[] = REGISTERS): ReferenceField[] {
  const out: ReferenceField[] = [];
  for (const register of registers) {
    const walk = (fields: Readonly<Record<string, Field>>, at: string) => {
      for (const [name, field] of Object.entries(fields)) {
        if (at === '' && name === 'id') continue;
        const target = field.ref === undefined ? undefined : registerByPrefix(field.ref);
        if (target && (field.kind === 'id' || field.kind === 'ids'))
          out.push({ register: register.path, field: at + name, names: target.path });
        if (field.kind === 'list' && field.of) walk(field.of, `${at}${name}[].`);
      }
    };
    walk(register.allFields, '');
  }
  return out;
}

const isRegisterPrefix = (prefix: string) => registerByPrefix(prefix) !== undefined;

/** A reference's JSON pointer as its field: `/approvers/2/person_id` -> `approvers[].person_id`, `/person_ids/0` -> `person_ids`. */
export function fieldOf(pointer: string): string {
  const parts = pointer.split('/').slice(1);
  let out = '';
  for (const [i, part] of parts.entries()) {
    if (/^\d+$/.test(part)) {
      if (i < parts.length - 1) out += '[]';
    } else out += out === '' ? part : `.${part}`;
  }
  return out;
}

/** The references of one record as `{field, id}` (what a write compares with the stored record). */
export function namedBy(register: Register, record: RecordObject): { field: string; id: string }[] {
  return referencesOf(register, record, isRegisterPrefix)
    .filter((r) => r.id !== record.id)
    .map((r) => ({ field: fieldOf(r.pointer), id: r.id }));
}

/**
 * The stored records (other than the targets themselves) that name any of `ids`, per target.
 * One query for the whole set, whatever its size.
 */
export async function storedReferrers(batch: RecordBatch, workspaceId: string, ids: readonly string[]): Promise<Map<string, Referrer[]>> {
  const out = new Map<string, Referrer[]>();
  const targets = new Set(ids);
  if (targets.size === 0) return out;
  const candidates = await batch.naming(workspaceId, [...targets]);
  for (const row of candidates) {
    if (targets.has(row.id)) continue;
    const register = registerByPath(row.register);
    if (!register) continue;
    for (const ref of namedBy(register, JSON.parse(row.doc) as RecordObject)) {
      if (!targets.has(ref.id)) continue;
      const list = out.get(ref.id) ?? [];
      out.set(ref.id, list);
      list.push({ register: row.register, field: ref.field, id: row.id });
    }
  }
  return out;
}

/** Referrers grouped per register and field, each group's ids sorted, the first REFERRER_IDS_LISTED listed. */
export function groupReferrers(referrers: readonly Referrer[]): ReferrerGroup[] {
  const groups = new Map<string, { register: string; field: string; ids: Set<string> }>();
  for (const r of referrers) {
    const key = `${r.register} ${r.field}`;
    const g = groups.get(key) ?? { register: r.register, field: r.field, ids: new Set<string>() };
    groups.set(key, g);
    g.ids.add(r.id);
  }
  return [...groups.values()]
    .sort((a, b) => (a.register === b.register ? a.field.localeCompare(b.field) : a.register.localeCompare(b.register)))
    .map((g) => {
      const ids = [...g.ids].sort();
      return { register: g.register, field: g.field, count: ids.length, ids: ids.slice(0, REFERRER_IDS_LISTED) };
    });
}

/** Why a delete is refused, in words: who names the record, and what to do. */
export function referencedDetail(id: string, groups: readonly ReferrerGroup[]): string {
  const named = groups
    .map((g) => `${g.count} ${g.register} by ${g.field} (${g.ids.slice(0, 3).join(', ')}${g.count > 3 ? ', ...' : ''})`)
    .join('; ');
  return `${id} is still referenced: ${named}. Point those records elsewhere (or clear the field), or delete them first, then delete ${id}`;
}

/** Each group as one line for a person: `12 people by manager_id: per_r01, ... per_r10 and 2 more`. */
export function referrerLines(groups: readonly ReferrerGroup[]): string[] {
  return groups.map(
    (g) =>
      `${g.count} ${g.register} by ${g.field}: ${g.ids.join(', ')}${g.count > g.ids.length ? ` and ${g.count - g.ids.length} more` : ''}`,
  );
}

/** The 409 of a refused delete, its referrers in `referrers`. */
export function referencedError(id: string, groups: readonly ReferrerGroup[]): AppError {
  return new AppError('referenced', referencedDetail(id, groups), { referrers: groups });
}

/** Refuses the delete of `id` if stored records still name it. */
export async function assertUnreferenced(batch: RecordBatch, workspaceId: string, id: string): Promise<void> {
  const referrers = (await storedReferrers(batch, workspaceId, [id])).get(id);
  if (referrers?.length) throw referencedError(id, groupReferrers(referrers));
}
