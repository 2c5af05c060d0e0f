/**
 * PATCH of a User (RFC 7644 §3.5.2), applied by scim-patch (ADR 40) to the User as SCIM shows
 * it, then written whole as a replace would be. Operation names ignore case (Entra sends
 * "Replace"); values keep Entra's string booleans, which the User's reading takes.
 *
 * Every operation is checked before any applies (patch-paths.ts): scim-patch is handed only
 * names of the User schema, in its spelling, and values with no key naming the prototype, so
 * no name it walks reaches Object.prototype. (A copy without prototypes is not an option:
 * scim-patch compares values with fast-deep-equal, which calls their valueOf.)
 */
import { type ScimPatchOperation, scimPatch } from 'scim-patch';
import { controlCharacterIn, prototypeKeyIn } from '../text-rules.js';
import { invalidPath, invalidSyntax, invalidValue, ScimError } from './errors.js';
import { checkedPath, pathNamesPrototype } from './patch-paths.js';
import { ENTERPRISE_SCHEMA } from './users.js';

export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const MANAGER_PATH = `${ENTERPRISE_SCHEMA}:manager`;
/** Operations in one PATCH: identity providers send one to a handful. */
export const MAX_OPERATIONS = 100;

function operations(body: unknown): ScimPatchOperation[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalidSyntax('A PATCH body is a JSON object with "schemas" and "Operations".');
  const b = body as Record<string, unknown>;
  if (!Array.isArray(b.schemas) || !b.schemas.includes(PATCH_SCHEMA))
    throw invalidSyntax(`A PATCH body's schemas must hold ${PATCH_SCHEMA}.`);
  const ops = b.Operations ?? b.operations;
  if (!Array.isArray(ops) || ops.length === 0) throw invalidSyntax('A PATCH body holds "Operations": an array of at least one operation.');
  if (ops.length > MAX_OPERATIONS) throw invalidSyntax(`A PATCH holds at most ${MAX_OPERATIONS} operations.`);
  return ops.flatMap((raw, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalidSyntax(`Operations[${i}] must be an object.`);
    const o = raw as Record<string, unknown>;
    const op = typeof o.op === 'string' ? o.op.toLowerCase() : undefined;
    if (op !== 'add' && op !== 'replace' && op !== 'remove') throw invalidSyntax(`Operations[${i}].op must be add, replace or remove.`);
    if (o.path !== undefined) {
      if (typeof o.path !== 'string' || o.path.length === 0 || o.path.length > 300)
        throw invalidPath(`Operations[${i}].path must be a path of 1 to 300 characters.`);
      if (controlCharacterIn(o.path) !== undefined || /[\n\r\t]/.test(o.path))
        throw invalidPath(`Operations[${i}].path holds a control character.`);
    }
    if (op === 'remove' && o.path === undefined) throw new ScimError(400, `Operations[${i}] removes without a path.`, 'noTarget');
    if (op !== 'remove' && o.value === undefined) throw invalidValue(`Operations[${i}] has no value.`);
    // scim-patch reads a value's keys as paths too: every key, at any depth, is checked as one.
    const hostile = prototypeKeyIn(o.value, pathNamesPrototype);
    if (hostile !== undefined) {
      throw invalidPath(
        `Operations[${i}].value has a key at ${hostile.slice(0, 200)} naming __proto__, constructor or prototype; nothing was applied.`,
      );
    }
    if (o.path === undefined) return [{ op, value: attributesOf(o.value, i) } as ScimPatchOperation];
    const path = checkedPath(o.path as string, `Operations[${i}].path`);
    if (path === undefined) return [];
    // The manager is single-valued: an add sets it as a replace does (RFC 7644 §3.5.2.1), and
    // Entra's bare id is the schema's {"value": id}.
    if (path === MANAGER_PATH && op !== 'remove') {
      const value = typeof o.value === 'string' ? { value: o.value } : o.value;
      return [{ op: 'replace', path, value } as ScimPatchOperation];
    }
    return [{ op, path, value: o.value } as ScimPatchOperation];
  });
}

/** The value of an operation without a path: its keys are paths, rebuilt as checkedPath says; ignored attributes are left out. */
function attributesOf(value: unknown, i: number): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidValue(`Operations[${i}] has no path, so its value must be an object of attributes.`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const path = checkedPath(key, `Operations[${i}].value's key ${JSON.stringify(key.slice(0, 60))}`, false);
    if (path !== undefined) out[path] = v;
  }
  return out;
}

/** The User after the PATCH, or a SCIM error naming the operation that cannot apply. */
export function patchedUser(user: Record<string, unknown>, body: unknown): Record<string, unknown> {
  const ops = operations(body);
  let after: Record<string, unknown>;
  try {
    after = scimPatch(user as never, ops, { mutateDocument: false, treatMissingAsAdd: true }) as unknown as Record<string, unknown>;
  } catch (err) {
    const e = err as { scimType?: string; message?: string };
    const detail = `The PATCH cannot apply: ${String(e.message ?? err).slice(0, 200)}`;
    if (e.scimType === 'noTarget') throw new ScimError(400, detail, 'noTarget');
    if (e.scimType === 'invalidValue') throw invalidValue(detail);
    throw invalidPath(detail);
  }
  if (after.id !== user.id) throw new ScimError(400, 'id is assigned by wsops and cannot be changed.', 'mutability');
  return after;
}
