/**
 * `filter` of a Users list (RFC 7644 §3.4.2.2), parsed by scim2-parse-filter (ADR 40) and
 * compiled to a condition the database evaluates (directory.ts runs it), over the attributes
 * the discovery documents name, with each attribute's own case rule (userName, emails and names
 * compare ignoring case, ids, externalId and employeeNumber exactly). The condition is on a row
 * `r` of scim_people_fields (migration 0043: the compared fields of each person, short, kept
 * lower-cased where they compare ignoring case), never on the people's JSON documents. No list
 * reads a register into the process: equality, prefix and presence tests are served by the
 * short rows' indexes (migration 0044), and the negation of an equality is counted from them;
 * anything else is a scan of those short rows in the database, which the caller's budget pays
 * for (routes.ts).
 */

import { type Filter, parse } from 'scim2-parse-filter';
import { type RawBuilder, sql } from '#kysely';
import type { DocFields } from '../store/dialects/doc-fields.js';
import { controlCharacterIn } from '../text-rules.js';
import { invalidFilter } from './errors.js';
import { ENTERPRISE_SCHEMA } from './users.js';

/** Longer filters are refused before parsing: identity providers send one or two comparisons. */
export const MAX_FILTER_LENGTH = 1000;
/** Nesting of and/or/not/parentheses at most this deep. */
export const MAX_FILTER_DEPTH = 10;

/** What a condition is built for: the workspace, and the dialect's SQL for fields of a record's JSON. */
export interface FilterContext {
  workspaceId: string;
  fields: DocFields;
}

/** A condition on the scim_people_fields row `r` (always true or false, never SQL's unknown, so `not` is exact). */
type Condition = (ctx: FilterContext) => RawBuilder<boolean>;
type Op = 'eq' | 'ne' | 'co' | 'sw' | 'ew';

/** A comparison of a text expression, null-safe: a missing value matches only `ne`. */
function textTest(ctx: FilterContext, expr: RawBuilder<unknown>, op: Exclude<Op, 'ne'>, value: string): RawBuilder<boolean> {
  if (op !== 'eq' && value === '') return sql<boolean>`(${expr} IS NOT NULL)`;
  const test = {
    eq: () => sql<boolean>`${expr} = ${value}`,
    sw: () => ctx.fields.startsWith(expr, value),
    ew: () => ctx.fields.endsWith(expr, value),
    co: () => ctx.fields.contains(expr, value),
  }[op]();
  return sql<boolean>`(${expr} IS NOT NULL AND ${test})`;
}

interface Attribute {
  caseExact: boolean;
  /** The attribute's value for the scim_people_fields row `r` (lower-cased where it ignores case). */
  value(ctx: FilterContext): RawBuilder<unknown>;
  /**
   * Whether an index over the short rows serves an equality, prefix or presence test of the
   * value (migration 0044: keyed by workspace and value, over the people SCIM sees), so the test
   * is counted and paged in that index instead of testing every person's row.
   */
  indexed: boolean;
}

/** A column of scim_people_fields, kept lower-cased unless the attribute compares case-exactly. */
const column = (name: string, caseExact: boolean, indexed = true): Attribute => ({
  caseExact,
  value: () => sql.ref(`r.${name}`),
  indexed,
});

/**
 * userName: the one SCIM wrote (scim_people.user_name_key), else, for a person SCIM never named
 * (or one a DELETE kept, which released it), the work email: scim_people_fields.user_name holds
 * the one that applies.
 */
const userName = column('user_name', false);
const workEmail = column('work_email', false);
/** The short rows' key: its own index. */
const ID = column('person_id', true);
/** manager.value: the manager's id, compared exactly. */
const MANAGER = column('manager_id', true);

const attributes: Record<string, Attribute> = {
  id: ID,
  username: userName,
  'emails.value': workEmail,
  emails: workEmail,
  externalid: column('external_id', true),
  displayname: column('display_name', false),
  'name.givenname': column('given_name', false),
  'name.familyname': column('family_name', false),
  [`${ENTERPRISE_SCHEMA.toLowerCase()}:employeenumber`]: column('employee_number', true),
  [`${ENTERPRISE_SCHEMA.toLowerCase()}:manager.value`]: MANAGER,
};

/** The attributes a filter may name, as the ServiceProviderConfig and README list them. */
export const FILTER_ATTRIBUTES = [
  'id',
  'userName',
  'externalId',
  'emails.value',
  'active',
  'displayName',
  'name.givenName',
  'name.familyName',
  `${ENTERPRISE_SCHEMA}:employeeNumber`,
  `${ENTERPRISE_SCHEMA}:manager.value`,
];
export const FILTER_OPERATORS = ['eq', 'ne', 'co', 'sw', 'ew', 'pr', 'and', 'or', 'not'];

/**
 * A compiled part: its condition, and whether an index serves it (it is counted and paged in
 * that index); if not, it is tested on every person's row (a scan, run in slices: directory.ts).
 * An equality selects few people (`few`); its negation (`not`, `ne`, `active eq true`, `pr`) is
 * then counted as the people SCIM sees less the equality's matches, and paged in id order, where
 * nearly every person matches (`complement`): not a scan of the rows, but a count of everyone.
 */
interface Part {
  where: Condition;
  indexed: boolean;
  few?: boolean;
  /** Set on the negation of a `few` part: that part. */
  complement?: Part;
}

const always = (value: boolean): Part => ({
  where: () => (value ? sql<boolean>`(1 = 1)` : sql<boolean>`(1 = 0)`),
  indexed: false,
});
function negate(p: Part): Part {
  // Conditions are never unknown: not (not x) is x, and keeps x's index.
  if (p.complement) return p.complement;
  return { where: (ctx) => sql<boolean>`NOT ${p.where(ctx)}`, indexed: false, complement: p.few ? p : undefined };
}

function compare(op: string, path: string, compValue: unknown): Part {
  const name = path.toLowerCase().replace(/^urn:ietf:params:scim:schemas:core:2\.0:user:/, '');
  if (name === 'active') return compareActive(op, compValue);
  const attr = attributes[name];
  if (!attr)
    throw invalidFilter(`A filter may not name ${JSON.stringify(path.slice(0, 80))}; it may name ${FILTER_ATTRIBUTES.join(', ')}.`);
  // No value, looked up in the attribute's index (null and '' both); never unknown. Its negation,
  // `pr`, is counted as everyone less these, which an attribute most people have makes few.
  const absent: Part = {
    where: (ctx) => sql<boolean>`(${attr.value(ctx)} IS NULL OR ${attr.value(ctx)} = '')`,
    indexed: attr.indexed,
    few: attr.indexed,
  };
  const present = negate(absent);
  if (op === 'pr') return present;
  if (typeof compValue === 'boolean' || compValue === null) {
    if (op !== 'eq' && op !== 'ne') throw invalidFilter(`${op} compares text; true, false and null take eq or ne.`);
    // Text is never true or false; null is "no value".
    if (compValue !== null) return always(op === 'ne');
    return op === 'eq' ? absent : present;
  }
  if (typeof compValue !== 'string') throw invalidFilter('Compare with a quoted string, true, false or null.');
  if (!['eq', 'ne', 'co', 'sw', 'ew'].includes(op))
    throw invalidFilter(`The operator ${op} is not supported; use ${FILTER_OPERATORS.join(', ')}.`);
  const value = attr.caseExact ? compValue : compValue.toLowerCase();
  if (op === 'ne') return negate(compare('eq', path, compValue));
  const test = op as Exclude<Op, 'ne'>;
  const served = attr.indexed && (test === 'eq' || test === 'sw');
  return { where: (ctx) => textTest(ctx, attr.value(ctx), test, value), indexed: served, few: served && test === 'eq' };
}

/** The people who are not ACTIVE, as the partial index of migration 0044 names them (the same text, so it serves). */
const INACTIVE: Part = {
  where: () => sql<boolean>`(r.status IS NULL OR r.status <> 'ACTIVE')`,
  indexed: true,
  few: true,
};

/** active: the person's status (true: ACTIVE); the string "true"/"false" compares as the boolean. */
function compareActive(op: string, compValue: unknown): Part {
  if (op === 'pr') return always(true);
  if (op !== 'eq' && op !== 'ne') throw invalidFilter('active is true or false: compare it with eq or ne.');
  const wanted = typeof compValue === 'string' ? compValue.toLowerCase() === 'true' : compValue === true;
  const active = (op === 'eq') === wanted;
  return active ? negate(INACTIVE) : INACTIVE;
}

/** Parts joined by and or or. */
function combine(op: 'and' | 'or', parts: readonly Part[]): Part {
  const joiner = op === 'and' ? sql` AND ` : sql` OR `;
  return {
    where: (ctx) =>
      sql<boolean>`(${sql.join(
        parts.map((p) => p.where(ctx)),
        joiner,
      )})`,
    // An and is served by an index when one of its terms is (the others are read of its few
    // matches only); an or only when each is.
    indexed: op === 'and' ? parts.some((p) => p.indexed) : parts.every((p) => p.indexed),
  };
}

function compile(f: Filter, depth: number): Part {
  if (depth > MAX_FILTER_DEPTH) throw invalidFilter(`The filter nests deeper than ${MAX_FILTER_DEPTH} levels.`);
  switch (f.op) {
    case 'and':
    case 'or':
      return combine(
        f.op,
        f.filters.map((g) => compile(g, depth + 1)),
      );
    case 'not':
      return negate(compile(f.filter, depth + 1));
    case '[]': {
      // emails[...]: the one work email, whose type is work and which is primary.
      if (f.attrPath.toLowerCase() !== 'emails') throw invalidFilter('A bracketed filter may only be on emails.');
      return compileEmailEntry(f.valFilter, depth + 1);
    }
    default:
      return compare(f.op, f.attrPath, 'compValue' in f ? f.compValue : undefined);
  }
}

/**
 * A filter on the entries of emails (`emails[type eq "work" and value eq "x"]`): wsops keeps one
 * entry, the work email, so `value` compares the work email, `type` is "work" and `primary` true.
 */
function compileEmailEntry(f: Filter, depth: number): Part {
  if (depth > MAX_FILTER_DEPTH) throw invalidFilter(`The filter nests deeper than ${MAX_FILTER_DEPTH} levels.`);
  switch (f.op) {
    case 'and':
    case 'or':
      return combine(
        f.op,
        f.filters.map((g) => compileEmailEntry(g, depth + 1)),
      );
    case 'not':
      return negate(compileEmailEntry(f.filter, depth + 1));
    case '[]':
      throw invalidFilter('Inside emails[...] a filter may compare value, type and primary.');
    default: {
      const name = f.attrPath.toLowerCase();
      const value = 'compValue' in f ? f.compValue : undefined;
      if (name === 'value') return compare(f.op, 'emails.value', value);
      if (name === 'type' && (f.op === 'eq' || f.op === 'ne') && typeof value === 'string')
        return always((value.toLowerCase() === 'work') === (f.op === 'eq'));
      if (name === 'primary' && (f.op === 'eq' || f.op === 'ne') && typeof value === 'boolean') return always(value === (f.op === 'eq'));
      if ((name === 'type' || name === 'primary') && f.op === 'pr') return always(true);
      throw invalidFilter('Inside emails[...] a filter may compare value, type (eq or ne) and primary (eq or ne).');
    }
  }
}

/** The deepest nesting of parentheses and brackets outside quoted strings: bounds the parser's recursion. */
function nesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '(' || c === '[') deepest = Math.max(deepest, ++depth);
    else if (c === ')' || c === ']') depth--;
  }
  return deepest;
}

export interface CompiledFilter {
  /** The condition on the scim_people_fields row `r`. */
  where: Condition;
  /** Whether an index serves it (counted and paged in the index); else it tests every person's row, in slices (directory.ts). */
  indexed: boolean;
  /** Set when the filter is the negation of an equality an index serves: that equality, counted in its index. */
  complement?: Condition;
}

/** The condition of a filter, or a 400 invalidFilter saying what is wrong with it. */
export function compileFilter(text: string): CompiledFilter {
  if (text.length > MAX_FILTER_LENGTH) throw invalidFilter(`The filter is longer than ${MAX_FILTER_LENGTH} characters.`);
  if (controlCharacterIn(text) !== undefined || /[\n\r\t]/.test(text)) throw invalidFilter('The filter holds a control character.');
  if (nesting(text) > MAX_FILTER_DEPTH) throw invalidFilter(`The filter nests deeper than ${MAX_FILTER_DEPTH} levels.`);
  let ast: Filter;
  try {
    ast = parse(text);
  } catch (err) {
    const why = err instanceof RangeError ? 'it nests too deeply' : String((err as Error).message).slice(0, 120);
    throw invalidFilter(`The filter could not be parsed: ${why}. Example: userName eq "ada@example.com".`);
  }
  const part = compile(ast, 0);
  return { where: part.where, indexed: part.indexed, complement: part.complement?.where };
}

/**
 * Whether a filter's read grows with the directory, so it is paced per workspace (routes.ts): a
 * scan of every person's row, or a negation, whose count is of everyone SCIM sees.
 */
export const scans = (filter: CompiledFilter): boolean => !filter.indexed;
