/**
 * Event content filters (issue 61, ADR 53; the language: docs/guide/filters.md): a JSON match,
 * in the style of Convoy's and Hookdeck Outpost's, against the whole webhook body
 * (`{id, type, created, api_version, data}`). An endpoint with a filter is sent only the events
 * that match it.
 *
 * parseFilter checks a filter once, at registration or update, and refuses it with the path and
 * the problem; compileFilter turns the stored text into a tree of closures once per read of the
 * endpoints, so the fan-out only runs those. Every clause knows its own path, so a failed match
 * can say which clause failed without any work on the matching path.
 */
import { AppError } from '../../errors.js';
import { namesPrototype } from '../../text-rules.js';

/** The largest filter, as its JSON text in UTF-8 bytes: a filter is a few clauses, not a document. */
export const MAX_FILTER_BYTES = 4096;
/** The deepest nesting of objects and arrays in a filter (the body itself is at most five deep). */
export const MAX_FILTER_DEPTH = 8;
/** The most values an `$in` or `$nin` list may hold. */
const MAX_LIST = 100;

/** Operators on one field's value. `$regex` is left out on purpose: no pattern may stall the fan-out (ADR 53). */
const FIELD_OPERATORS = ['$eq', '$neq', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exist'] as const;
/** Operators joining whole filters at one level of the body. */
const LOGICAL_OPERATORS = ['$and', '$or'] as const;
const ALL_OPERATORS = [...FIELD_OPERATORS, ...LOGICAL_OPERATORS].join(' ');

type FieldOperator = (typeof FIELD_OPERATORS)[number];
type Primitive = string | number | boolean | null;

/**
 * A compiled clause: undefined when `value` matches, else the path of the clause that failed
 * (a string made at compile time, so a match allocates nothing).
 */
type Clause = (value: unknown) => string | undefined;

export interface CompiledFilter {
  /** The filter as stored: canonical JSON text. */
  readonly text: string;
  /** Undefined when the body matches; else the path of the first clause that failed (`data.purchase_request.amount_minor.$gt`). */
  readonly failure: (body: unknown) => string | undefined;
}

function refuse(path: string, problem: string): never {
  throw new AppError('invalid_parameter', `invalid filter at ${path}: ${problem}`, { param: 'filter', rule: 'filter' });
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPrimitive = (v: unknown): v is Primitive =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
const describe = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v);

/**
 * Reads a filter as given: JSON text (CLI, console) or a parsed value (internal API); null, or
 * empty text, means no filter. Returns the canonical text to store, or null; a filter that breaks
 * a rule is an `invalid_parameter` naming the path and the problem.
 */
export function parseFilter(input: unknown): string | null {
  let value = input;
  if (typeof input === 'string') {
    if (input.trim() === '') return null;
    if (Buffer.byteLength(input, 'utf8') > MAX_FILTER_BYTES) refuse('filter', `longer than ${MAX_FILTER_BYTES} bytes`);
    try {
      value = JSON.parse(input);
    } catch (err) {
      refuse('filter', `not JSON (${(err as Error).message})`);
    }
  }
  if (value === null || value === undefined) return null;
  if (!isPlainObject(value)) refuse('filter', `must be a JSON object, not ${describe(value)}`);
  if (Object.keys(value).length === 0) refuse('filter', 'an empty filter matches every event; clear the filter instead');
  checkShape(value, 'filter', 1);
  const text = JSON.stringify(value);
  if (Buffer.byteLength(text, 'utf8') > MAX_FILTER_BYTES) refuse('filter', `longer than ${MAX_FILTER_BYTES} bytes`);
  compileDocument(value, '');
  return text;
}

/** Depth and keys, before any meaning is read: the rules that protect the reader. */
function checkShape(value: unknown, path: string, depth: number): void {
  if (typeof value !== 'object' || value === null) return;
  if (depth > MAX_FILTER_DEPTH) refuse(path, `nested deeper than ${MAX_FILTER_DEPTH} levels`);
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) checkShape(v, `${path}[${i}]`, depth + 1);
    return;
  }
  for (const key of Object.keys(value)) {
    const at = `${path}.${key.slice(0, 60)}`;
    if (namesPrototype(key)) refuse(at, 'a key naming __proto__, constructor or prototype is never accepted');
    checkShape((value as Record<string, unknown>)[key], at, depth + 1);
  }
}

/**
 * Compiles stored filter text (written by parseFilter). A stored filter that no longer reads
 * (a rule tightened since) delivers everything rather than dropping events silently: a receiver
 * can ignore an extra event, but not one it never got.
 */
export function compileFilter(text: string | null | undefined): CompiledFilter | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (!isPlainObject(value)) return null;
    return { text, failure: compileDocument(value, '') };
  } catch {
    return null;
  }
}

/** Whether a webhook body (parsed) matches a compiled filter; no filter matches everything. */
export function matchesFilter(filter: CompiledFilter | null, body: unknown): boolean {
  return filter === null || filter.failure(body) === undefined;
}

const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

/**
 * One level of the body: each plain key a field of it, `$and`/`$or` filters of the same level;
 * every entry must match (an implicit AND).
 */
function compileDocument(filter: Record<string, unknown>, path: string): Clause {
  const clauses: Clause[] = [];
  for (const [key, spec] of Object.entries(filter)) {
    const at = join(path, key);
    if (key.startsWith('$')) {
      if (key !== '$and' && key !== '$or') {
        if ((FIELD_OPERATORS as readonly string[]).includes(key))
          refuse(`filter.${at}`, `${key} compares a field's value: put it inside the field, as {"amount_minor": {"${key}": …}}`);
        refuse(`filter.${at}`, `unknown operator ${key.slice(0, 40)}; the operators are ${ALL_OPERATORS}`);
      }
      clauses.push(compileLogical(key, spec, at, path));
      continue;
    }
    if (key === '') refuse(`filter.${at}`, 'an empty field name');
    if (key.includes('.'))
      refuse(`filter.${at}`, `a field name with a dot; nest objects instead: {"${key.split('.')[0]}": {"${key.split('.')[1]}": …}}`);
    const field = compileField(spec, at);
    clauses.push((value) => field(isPlainObject(value) && Object.hasOwn(value, key) ? value[key] : undefined));
  }
  return (value) => {
    for (const clause of clauses) {
      const failed = clause(value);
      if (failed !== undefined) return failed;
    }
    return undefined;
  };
}

/** `$and`/`$or` at `path`: its filters match the same level of the body as the object holding it (`level`). */
function compileLogical(op: string, spec: unknown, path: string, level: string): Clause {
  if (!Array.isArray(spec) || spec.length === 0) refuse(`filter.${path}`, `${op} takes a non-empty array of filters`);
  const parts = spec.map((part, i) => {
    if (!isPlainObject(part) || Object.keys(part).length === 0)
      refuse(`filter.${path}[${i}]`, `each filter of ${op} is a non-empty object, not ${describe(part)}`);
    return compileDocument(part, level);
  });
  if (op === '$and') {
    return (value) => {
      for (const part of parts) {
        const failed = part(value);
        if (failed !== undefined) return failed;
      }
      return undefined;
    };
  }
  return (value) => (parts.some((part) => part(value) === undefined) ? undefined : path);
}

/** What a field must hold: a value (equality), an object of operators, or an object to match nested fields. */
function compileField(spec: unknown, path: string): Clause {
  if (Array.isArray(spec)) refuse(`filter.${path}`, 'an array is not a value to match; use {"$in": [...]} for any of several values');
  if (!isPlainObject(spec)) {
    if (!isPrimitive(spec)) refuse(`filter.${path}`, `${describe(spec)} is not a value to match`);
    return operator('$eq', spec, path);
  }
  const keys = Object.keys(spec);
  if (keys.length === 0) refuse(`filter.${path}`, 'an empty object matches nothing; give fields or operators');
  const operators = keys.filter((k) => (FIELD_OPERATORS as readonly string[]).includes(k));
  if (operators.length === 0) {
    // Nested fields: the value must be an object (or an array holding one) that matches them.
    const nested = compileDocument(spec, path);
    return elementWise((v) => isPlainObject(v) && nested(v) === undefined, path, nested);
  }
  if (operators.length !== keys.length) {
    const other = keys.find((k) => !operators.includes(k)) as string;
    if (other.startsWith('$')) refuse(`filter.${path}.${other.slice(0, 40)}`, `unknown operator; the operators are ${ALL_OPERATORS}`);
    refuse(`filter.${path}`, `operators and field names are not mixed in one object ("${other.slice(0, 40)}" beside ${operators[0]})`);
  }
  const clauses = operators.map((op) => operator(op as FieldOperator, spec[op], `${path}.${op}`));
  return (value) => {
    for (const clause of clauses) {
      const failed = clause(value);
      if (failed !== undefined) return failed;
    }
    return undefined;
  };
}

/**
 * A test of one value, applied to an array element by element (MongoDB's rule): a field holding
 * an array matches when any element does. `nested` explains a failed nested match on an object.
 */
function elementWise(test: (v: unknown) => boolean, path: string, nested?: Clause): Clause {
  return (value) => {
    if (Array.isArray(value)) return value.some(test) ? undefined : path;
    if (test(value)) return undefined;
    return nested && isPlainObject(value) ? nested(value) : path;
  };
}

const comparable = (a: unknown, b: Primitive) =>
  (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');

function operator(op: FieldOperator, arg: unknown, path: string): Clause {
  const at = `filter.${path}`;
  switch (op) {
    case '$eq':
    case '$neq': {
      if (!isPrimitive(arg)) refuse(at, `${op} takes a string, number, boolean or null, not ${describe(arg)}`);
      const equal = elementWise((v) => v === arg, path);
      return op === '$eq' ? equal : negate(equal, path);
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      if (!(typeof arg === 'string' || (typeof arg === 'number' && Number.isFinite(arg))))
        refuse(at, `${op} takes a number or a string (e.g. an RFC 3339 time), not ${describe(arg)}`);
      const b = arg as Primitive;
      const compare = {
        $gt: (a: unknown) => comparable(a, b) && (a as number) > (b as number),
        $gte: (a: unknown) => comparable(a, b) && (a as number) >= (b as number),
        $lt: (a: unknown) => comparable(a, b) && (a as number) < (b as number),
        $lte: (a: unknown) => comparable(a, b) && (a as number) <= (b as number),
      }[op];
      return elementWise(compare, path);
    }
    case '$in':
    case '$nin': {
      if (!Array.isArray(arg) || arg.length === 0 || arg.length > MAX_LIST || !arg.every(isPrimitive))
        refuse(at, `${op} takes an array of 1 to ${MAX_LIST} strings, numbers, booleans or nulls`);
      const set = new Set<unknown>(arg);
      const within = elementWise((v) => set.has(v), path);
      return op === '$in' ? within : negate(within, path);
    }
    case '$exist': {
      if (typeof arg !== 'boolean') refuse(at, `$exist takes true or false, not ${describe(arg)}`);
      return (value) => ((value !== undefined) === arg ? undefined : path);
    }
  }
}

/** `$neq` and `$nin`: no element matches; a missing field holds no value, so it matches (as in MongoDB). */
function negate(positive: Clause, path: string): Clause {
  return (value) => (value !== undefined && positive(value) === undefined ? path : undefined);
}
