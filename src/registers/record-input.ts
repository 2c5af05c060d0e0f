/**
 * What a system of record writes, checked against the register's declaration: the body of a PUT
 * or PATCH, or the `record` of an import line, turned into the record as it will be stored and
 * returned. Every rule of a written record lives here, so the HTTP routes, the import and the
 * CLI refuse the same things with the same words (ADR 20).
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { controlCharacterIn, printable } from '../text-rules.js';
import type { Register } from './define.js';
import { type Field, idPattern, idRule, type JsonSchema } from './fields.js';

export type RecordObject = Record<string, unknown>;

/** One refused field: where (a JSON pointer into the body), a stable code, and why. */
export interface FieldProblem {
  pointer: string;
  code: FieldProblemCode;
  detail: string;
}

/** The codes of a refused field or import line, documented in the internal OpenAPI document. */
export const FIELD_PROBLEM_CODES = {
  invalid_json: 'The line is not JSON (or is cut off).',
  line_too_long: 'The line is longer than the import accepts.',
  invalid_operation: 'The line is not `{"register", "op": "upsert", "record"}` or `{"register", "op": "delete", "id"}`.',
  unknown_register: 'No register has this name.',
  unknown_field: 'The record has a field its register does not declare (a typo is never silently dropped).',
  required: 'A field without a default is missing.',
  invalid_type: 'The value has the wrong JSON type.',
  invalid_value: 'The value is outside the accepted set (an enumeration, an ISO 4217 currency, an IANA time zone).',
  invalid_format: 'The value is not a date (`YYYY-MM-DD`), an instant (ISO 8601 with an offset), an email or an id of the right register.',
  too_long: 'A string or list is longer than allowed.',
  out_of_range: 'A number is outside its bounds.',
  invalid_characters:
    'A string holds a NUL or other control character (tab, line feed and carriage return are allowed) or a lone surrogate.',
  id_mismatch: "The id in the body differs from the id in the path, or its prefix is not the register's.",
  derived_mismatch: 'A derived field was given a value other than the one wsops computes.',
  dangling_reference: 'A reference names a record that does not exist in the workspace.',
  referenced: 'A delete names a record that other records still reference; `referrers` names them per register and field.',
} as const;
export type FieldProblemCode = keyof typeof FIELD_PROBLEM_CODES;

export type InputResult = { ok: true; record: RecordObject } | { ok: false; problems: FieldProblem[] };

const STAMPS = ['created_at', 'updated_at'] as const;

/** No lone surrogate (String.prototype.isWellFormed: Node 20 has it, TypeScript's lib here does not yet). */
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

// Two compilations of each schema: a fast one that stops at the first error (every valid
// record), and one that collects every error for the answer to a refused one.
const quick = new Ajv2020({ allErrors: false, strict: false });
const thorough = new Ajv2020({ allErrors: true, strict: false });
for (const a of [quick, thorough]) (addFormats as unknown as (a: Ajv2020) => void)(a);

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
const TIME_ZONES = new Set([...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC']);

/** JSON Schema of a written object: required are the fields that have no default. */
function writeSchema(fields: Readonly<Record<string, Field>>, skip: ReadonlySet<string>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(fields)) {
    properties[name] = field.of ? { ...field.schema(), items: writeSchema(field.of, new Set()) } : field.schema();
    if (!skip.has(name) && !hasDefault(field)) required.push(name);
  }
  return { type: 'object', additionalProperties: false, required, properties };
}

/** Nullable fields default to null, lists to empty. */
function hasDefault(field: Field): boolean {
  return field.nullable || field.kind === 'list' || field.kind === 'ids';
}

interface Validators {
  quick: ValidateFunction;
  thorough: ValidateFunction;
}
interface Compiled {
  stamped: Validators;
  keepingStamps: Validators;
}
const compiled = new Map<string, Compiled>();

/**
 * The JSON Schema of what a system of record writes to a register: without the stamps (wsops's
 * to write; a body may carry them back from a GET and they are ignored), or with them (an
 * import that keeps timestamps). The internal OpenAPI document's request body is the first.
 */
export function writeSchemaOf(register: Register, withStamps = false): JsonSchema {
  const derived = new Set(Object.keys(register.derived ?? {}));
  const fields = withStamps
    ? register.allFields
    : Object.fromEntries(Object.entries(register.allFields).filter(([n]) => !(STAMPS as readonly string[]).includes(n)));
  return { ...writeSchema(fields, new Set([...derived, 'id'])), description: register.description };
}

/**
 * The JSON Schema of a merge patch (RFC 7396) of a register's record, the internal document's
 * PATCH body: the write schema with no field required, and `null` admitted where removing the
 * member leaves a valid record (a nullable field becomes null, a list empty, a derived field is
 * computed again). A null for a field without a default is not admitted: the record it would
 * leave is refused (422 `required`). Arrays replace whole, so their items are the write schema's.
 */
export function patchSchemaOf(register: Register): JsonSchema {
  const whole = writeSchemaOf(register);
  const derived = register.derived ?? {};
  const properties = Object.fromEntries(
    Object.entries(whole.properties as Record<string, JsonSchema>).map(([name, schema]) => {
      const field = register.allFields[name];
      const removable = field !== undefined && name !== 'id' && (hasDefault(field) || name in derived);
      return [name, removable ? orNull(schema) : schema];
    }),
  );
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    description: `A merge patch of ${register.resource}: ${register.description}`,
  };
}

/** A schema that also admits null. */
function orNull(schema: JsonSchema): JsonSchema {
  const types = [schema.type].flat();
  if (types.includes('null')) return schema;
  const out: JsonSchema = { ...schema, type: [...types, 'null'] };
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  return out;
}

function validators(register: Register): Compiled {
  let c = compiled.get(register.path);
  if (!c) {
    const both = (schema: JsonSchema): Validators => ({ quick: quick.compile(schema), thorough: thorough.compile(schema) });
    c = { stamped: both(writeSchemaOf(register)), keepingStamps: both(writeSchemaOf(register, true)) };
    compiled.set(register.path, c);
  }
  return c;
}

export interface ReadOptions {
  /** The id the path names (PUT, PATCH); the body may repeat it or leave it out. */
  id?: string;
  /** Keep `created_at` and `updated_at` as given (an import that moves a workspace), instead of stamping them. */
  keepTimestamps?: boolean;
}

/**
 * Checks a written record and returns it as it will be stored (without stamps unless kept):
 * defaults filled, instants in canonical UTC form, derived fields computed.
 */
export function readRecordInput(register: Register, body: unknown, options: ReadOptions = {}): InputResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return fail('', 'invalid_type', `must be a JSON object: a ${register.resource} record`);
  }
  const input = { ...(body as RecordObject) };
  if (!options.keepTimestamps) for (const s of STAMPS) delete input[s];
  const problems: FieldProblem[] = [];
  if (options.id !== undefined) {
    if (input.id === undefined) input.id = options.id;
    else if (input.id !== options.id)
      problems.push({
        pointer: '/id',
        code: 'id_mismatch',
        detail: `is "${clip(input.id)}" but the path names ${options.id}; leave it out or repeat the path's id`,
      });
  } else if (input.id === undefined) {
    problems.push({
      pointer: '/id',
      code: 'required',
      detail: `is required: ${register.idPrefix}_ followed by the source's own identifier`,
    });
  }
  if (input.id !== undefined && !(typeof input.id === 'string' && idPattern(register.idPrefix).test(input.id)) && problems.length === 0) {
    problems.push({ pointer: '/id', code: 'id_mismatch', detail: idDetail(register.idPrefix, input.id) });
  }
  const given: RecordObject = {};
  if (register.derived) {
    for (const name of Object.keys(register.derived)) {
      if (name in input) {
        given[name] = input[name];
        delete input[name];
      }
    }
  }
  const { stamped, keepingStamps } = validators(register);
  const validate = options.keepTimestamps ? keepingStamps : stamped;
  if (!validate.quick(input)) {
    validate.thorough(input);
    problems.push(...(validate.thorough.errors ?? []).map((e) => problemOf(e, register, input)));
  }
  // Every fault in one answer: the checks JSON Schema cannot make (currencies, time zones,
  // instants, characters) run on each field the schema did not already refuse.
  const refused = problems.map((p) => p.pointer);
  const record: RecordObject = {};
  for (const { name, field, pointer, stamp } of writtenFields(register)) {
    if (stamp && !options.keepTimestamps) continue;
    record[name] = normalize(field, input[name], pointer, problems, refused);
  }
  if (problems.length) return { ok: false, problems: firstPerPointer(problems) };
  const out = register.withDerived(record);
  if (!register.derived) return { ok: true, record: out };
  for (const [name, value] of Object.entries(given)) {
    if (JSON.stringify(value) !== JSON.stringify(out[name])) {
      problems.push({
        pointer: `/${name}`,
        code: 'derived_mismatch',
        detail: `is derived by wsops (${register.fields[name]?.description ?? 'computed from other fields'}): expected ${JSON.stringify(out[name])}; leave it out`,
      });
    }
  }
  return problems.length ? { ok: false, problems } : { ok: true, record: out };
}

/** Fills defaults, checks what JSON Schema cannot say, and puts instants in canonical form. */
interface WrittenField {
  name: string;
  field: Field;
  pointer: string;
  stamp: boolean;
}
const written = new WeakMap<Register, readonly WrittenField[]>();
/** The fields a record is written with (derived ones left out), in order: worked out once per register, not per record. */
function writtenFields(register: Register): readonly WrittenField[] {
  let fields = written.get(register);
  if (!fields) {
    fields = Object.entries(register.allFields)
      .filter(([name]) => !register.derived?.[name])
      .map(([name, field]) => ({ name, field, pointer: `/${name}`, stamp: (STAMPS as readonly string[]).includes(name) }));
    written.set(register, fields);
  }
  return fields;
}

function normalize(field: Field, value: unknown, pointer: string, problems: FieldProblem[], refused: readonly string[]): unknown {
  if (value === undefined) return field.kind === 'list' || field.kind === 'ids' ? [] : null;
  if (value === null) return null;
  // A value the schema refused (at this pointer, or a list refused as a whole) is not looked at again.
  if (refused.includes(pointer)) return value;
  if (field.kind !== 'list' && refused.some((p) => p.startsWith(`${pointer}/`))) return value;
  switch (field.kind) {
    case 'list':
      if (!Array.isArray(value)) return value;
      return value.map((item: unknown, i) => {
        if (typeof item !== 'object' || item === null || Array.isArray(item) || refused.includes(`${pointer}/${i}`)) return item;
        const out: RecordObject = {};
        for (const [name, sub] of Object.entries(field.of ?? {}))
          out[name] = normalize(sub, (item as RecordObject)[name], `${pointer}/${i}/${name}`, problems, refused);
        return out;
      });
    case 'timestamp': {
      const ms = Date.parse(value as string);
      const year = Number.isNaN(ms) ? 0 : new Date(ms).getUTCFullYear();
      if (year < 1 || year > 9999) {
        problems.push({
          pointer,
          code: 'invalid_format',
          detail: `"${clip(value)}" is not an instant between years 1 and 9999 (ISO 8601 with an offset, e.g. 2026-11-22T07:43:00.123Z)`,
        });
        return value;
      }
      return new Date(ms).toISOString();
    }
    case 'currency':
      if (!CURRENCIES.has(value as string))
        problems.push({ pointer, code: 'invalid_value', detail: `"${clip(value)}" is not an ISO 4217 currency code (e.g. EUR, USD, GBP)` });
      return value;
    case 'timezone':
      if (!TIME_ZONES.has(value as string))
        problems.push({ pointer, code: 'invalid_value', detail: `"${clip(value)}" is not an IANA time zone name (e.g. Europe/Berlin)` });
      return value;
    case 'string':
    case 'enum':
      if (controlCharacterIn(value as string) !== undefined || !wellFormed(value as string))
        problems.push({ pointer, code: 'invalid_characters', detail: FIELD_PROBLEM_CODES.invalid_characters });
      return value;
    default:
      return value;
  }
}

function problemOf(e: ErrorObject, register: Register, input: RecordObject): FieldProblem {
  const at = e.instancePath;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperty':
    case 'additionalProperties': {
      const name = String(p.additionalProperty);
      const known = at === '' ? Object.keys(register.allFields) : Object.keys(e.parentSchema?.properties ?? {});
      return {
        pointer: `${at}/${escapePointer(name)}`,
        code: 'unknown_field',
        detail: `is not a field of ${at === '' ? register.path : 'this item'}; fields are: ${known.join(', ')}`,
      };
    }
    case 'required':
      return { pointer: `${at}/${escapePointer(String(p.missingProperty))}`, code: 'required', detail: 'is required' };
    case 'enum':
      return {
        pointer: at,
        code: 'invalid_value',
        detail: `must be one of ${(p.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}`,
      };
    case 'type':
      return { pointer: at, code: 'invalid_type', detail: `must be ${[p.type].flat().join(' or ')}` };
    case 'format':
      return {
        pointer: at,
        code: 'invalid_format',
        detail: notACalendarDay(valueAt(input, at)) ?? FORMATS[String(p.format)] ?? `must be in ${String(p.format)} format`,
      };
    case 'pattern': {
      const ref = /^\^([a-z]+)_/.exec(String(p.pattern))?.[1];
      return ref
        ? { pointer: at, code: 'invalid_format', detail: idDetail(ref, undefined) }
        : { pointer: at, code: 'invalid_format', detail: `must match ${String(p.pattern)}` };
    }
    case 'maxLength':
    case 'maxItems':
      return {
        pointer: at,
        code: 'too_long',
        detail: `must hold at most ${String(p.limit)} ${e.keyword === 'maxItems' ? 'items' : 'characters'}`,
      };
    case 'minimum':
    case 'maximum':
      return {
        pointer: at,
        code: 'out_of_range',
        detail: `must be ${e.keyword === 'minimum' ? 'at least' : 'at most'} ${String(p.limit)}`,
      };
    default:
      return { pointer: at, code: 'invalid_value', detail: e.message ?? 'is invalid' };
  }
}

/** The value at a JSON pointer of the written object (for the words of a refusal). */
function valueAt(input: RecordObject, pointer: string): unknown {
  let value: unknown = input;
  for (const part of pointer.split('/').slice(1)) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as RecordObject)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return value;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/**
 * For a date (or an instant's date) that has the right shape but names no day of the calendar
 * (`2026-02-30`, `2025-13-01`): says so, instead of asking for the shape it already has.
 */
export function notACalendarDay(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:$|T)/.exec(value);
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12) return `"${clip(value)}" is not a calendar day: there is no month ${m[2]} (months are 01 to 12)`;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  if (day < 1 || day > days) {
    return `"${clip(value)}" is not a calendar day: ${MONTHS[month - 1]} ${m[1]} has ${days} days`;
  }
  return undefined;
}

const FORMATS: Record<string, string> = {
  date: 'must be a date YYYY-MM-DD',
  'date-time': 'must be an ISO 8601 instant with an offset, e.g. 2026-11-22T07:43:00.123Z',
  email: 'must be an email address',
};

function idDetail(prefix: string, got: unknown): string {
  return `must be an id: ${idRule(prefix)}${got === undefined ? '' : `; got "${clip(got)}"`}`;
}

/** One problem per field (the first), so a wrong value is not also reported as a wrong type. */
function firstPerPointer(problems: FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    if (seen.has(p.pointer)) return false;
    seen.add(p.pointer);
    return true;
  });
}

function fail(pointer: string, code: FieldProblemCode, detail: string): InputResult {
  return { ok: false, problems: [{ pointer, code, detail }] };
}

export function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A value quoted in a message: at most 60 characters, nothing a terminal would act on. */
export function clip(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  const safe = printable(wellFormed(text) ? text : text.replace(/\p{Surrogate}/gu, '\uFFFD'));
  return safe.length > 60 ? `${safe.slice(0, 57)}...` : safe;
}

/** A field that can name records: an id or ids of a register, or a list whose items have one. */
interface ReferenceField {
  name: string;
  /** `/name`: a top-level field's pointer, one string for every record. */
  pointer: string;
  kind: 'id' | 'ids' | 'list';
  /** A list's item fields that can name records. */
  of?: readonly ReferenceField[];
}
/**
 * The reference fields of a field set, by the predicate that says which prefixes are registers:
 * worked out once, so a record's references are found without walking every field (an import
 * asks for each line).
 */
const referenceFields = new WeakMap<(prefix: string) => boolean, WeakMap<object, readonly ReferenceField[]>>();
function referenceFieldsOf(
  fields: Readonly<Record<string, Field>>,
  isRegisterPrefix: (prefix: string) => boolean,
  top: boolean,
): readonly ReferenceField[] {
  let byFields = referenceFields.get(isRegisterPrefix);
  if (!byFields) {
    byFields = new WeakMap();
    referenceFields.set(isRegisterPrefix, byFields);
  }
  let out = byFields.get(fields);
  if (!out) {
    const list: ReferenceField[] = [];
    for (const [name, field] of Object.entries(fields)) {
      if (name === 'id' && top) continue;
      const named = field.ref !== undefined && isRegisterPrefix(field.ref);
      if ((field.kind === 'id' || field.kind === 'ids') && named) list.push({ name, pointer: `/${name}`, kind: field.kind });
      else if (field.kind === 'list' && field.of) {
        const of = referenceFieldsOf(field.of, isRegisterPrefix, false);
        if (of.length) list.push({ name, pointer: `/${name}`, kind: 'list', of });
      }
    }
    out = list;
    byFields.set(fields, out);
  }
  return out;
}

/** Every `*_id`/`*_ids` value of a stored record (nested items included) that names another record. */
export function referencesOf(
  register: Register,
  record: RecordObject,
  isRegisterPrefix: (prefix: string) => boolean,
): { pointer: string; id: string }[] {
  const out: { pointer: string; id: string }[] = [];
  collectReferences(referenceFieldsOf(register.allFields, isRegisterPrefix, true), record, '', out);
  return out;
}

function collectReferences(
  fields: readonly ReferenceField[],
  value: RecordObject,
  at: string,
  out: { pointer: string; id: string }[],
): void {
  for (const field of fields) {
    const v = value[field.name];
    if (field.kind === 'id') {
      if (typeof v === 'string') out.push({ pointer: at === '' ? field.pointer : `${at}${field.pointer}`, id: v });
    } else if (!Array.isArray(v)) continue;
    else if (field.kind === 'ids')
      for (let i = 0; i < v.length; i++) out.push({ pointer: `${at}${field.pointer}/${i}`, id: v[i] as string });
    else for (let i = 0; i < v.length; i++) collectReferences(field.of ?? [], v[i] as RecordObject, `${at}${field.pointer}/${i}`, out);
  }
}
