/**
 * `filter` of a Users list (RFC 7644 §3.4.2.2), parsed by scim2-parse-filter (ADR 40) and
 * evaluated here over the attributes the discovery documents name, with each attribute's own
 * case rule (userName and emails compare ignoring case, ids and externalId exactly).
 */
import { type Filter, parse } from 'scim2-parse-filter';
import { controlCharacterIn } from '../text-rules.js';
import { invalidFilter } from './errors.js';
import { ENTERPRISE_SCHEMA, type ScimLink } from './users.js';

/** Longer filters are refused before parsing: identity providers send one or two comparisons. */
export const MAX_FILTER_LENGTH = 1000;
/** Nesting of and/or/not/parentheses at most this deep. */
export const MAX_FILTER_DEPTH = 10;

export interface FilterSubject {
  person: Record<string, unknown>;
  link: ScimLink | undefined;
}

type Read = (s: FilterSubject) => string | boolean | null;
interface Attribute {
  read: Read;
  caseExact: boolean;
}

const attributes: Record<string, Attribute> = {
  id: { read: (s) => s.person.id as string, caseExact: true },
  username: { read: (s) => s.person.work_email as string, caseExact: false },
  'emails.value': { read: (s) => s.person.work_email as string, caseExact: false },
  emails: { read: (s) => s.person.work_email as string, caseExact: false },
  externalid: { read: (s) => s.link?.external_id ?? null, caseExact: true },
  active: { read: (s) => s.person.status === 'ACTIVE', caseExact: true },
  displayname: { read: (s) => s.person.display_name as string, caseExact: false },
  'name.givenname': { read: (s) => s.person.given_name as string, caseExact: false },
  'name.familyname': { read: (s) => s.person.family_name as string, caseExact: false },
  [`${ENTERPRISE_SCHEMA.toLowerCase()}:employeenumber`]: { read: (s) => s.link?.employee_number ?? null, caseExact: true },
  [`${ENTERPRISE_SCHEMA.toLowerCase()}:manager.value`]: { read: (s) => (s.person.manager_id as string | null) ?? null, caseExact: true },
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

type Predicate = (s: FilterSubject) => boolean;

function attributeNamed(path: string): Attribute {
  const found = attributes[path.toLowerCase().replace(/^urn:ietf:params:scim:schemas:core:2\.0:user:/, '')];
  if (!found)
    throw invalidFilter(`A filter may not name ${JSON.stringify(path.slice(0, 80))}; it may name ${FILTER_ATTRIBUTES.join(', ')}.`);
  return found;
}

function compare(op: string, attr: Attribute, compValue: unknown): Predicate {
  if (op === 'pr') {
    return (s) => {
      const v = attr.read(s);
      return v !== null && v !== '';
    };
  }
  if (typeof compValue === 'boolean' || compValue === null) {
    if (op !== 'eq' && op !== 'ne') throw invalidFilter(`${op} compares text; true, false and null take eq or ne.`);
    return (s) => (attr.read(s) === compValue) === (op === 'eq');
  }
  if (typeof compValue !== 'string') throw invalidFilter('Compare with a quoted string, true, false or null.');
  const norm = (v: string) => (attr.caseExact ? v : v.toLowerCase());
  const want = norm(compValue);
  const test: Record<string, (v: string) => boolean> = {
    eq: (v) => v === want,
    ne: (v) => v !== want,
    co: (v) => v.includes(want),
    sw: (v) => v.startsWith(want),
    ew: (v) => v.endsWith(want),
  };
  const t = test[op];
  if (!t) throw invalidFilter(`The operator ${op} is not supported; use ${FILTER_OPERATORS.join(', ')}.`);
  return (s) => {
    const v = attr.read(s);
    if (typeof v === 'boolean') return (String(v) === want) === (op !== 'ne');
    return v === null ? op === 'ne' : t(norm(v));
  };
}

function compile(f: Filter, depth: number): Predicate {
  if (depth > MAX_FILTER_DEPTH) throw invalidFilter(`The filter nests deeper than ${MAX_FILTER_DEPTH} levels.`);
  switch (f.op) {
    case 'and':
    case 'or': {
      const parts = f.filters.map((g) => compile(g, depth + 1));
      return f.op === 'and' ? (s) => parts.every((p) => p(s)) : (s) => parts.some((p) => p(s));
    }
    case 'not': {
      const inner = compile(f.filter, depth + 1);
      return (s) => !inner(s);
    }
    case '[]': {
      // emails[value eq "x"] and emails[type eq "work"]: the one work email.
      if (f.attrPath.toLowerCase() !== 'emails') throw invalidFilter('A bracketed filter may only be on emails.');
      const inner = f.valFilter;
      if (inner.op === 'eq' && inner.attrPath.toLowerCase() === 'type') return () => String(inner.compValue).toLowerCase() === 'work';
      if ('attrPath' in inner && inner.attrPath.toLowerCase() === 'value' && inner.op !== '[]') {
        return compile({ ...inner, attrPath: 'emails.value' } as Filter, depth + 1);
      }
      throw invalidFilter('Inside emails[...] a filter may compare value, or type with eq.');
    }
    default:
      return compare(f.op, attributeNamed(f.attrPath), 'compValue' in f ? f.compValue : undefined);
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

/**
 * The address a filter requires userName (or the work email) to equal, ignoring case: the
 * filter itself, or one term of a top-level `and`. Lets a list read only the candidates.
 */
function requiredEmail(f: Filter): string | undefined {
  if (f.op === 'eq' && typeof f.compValue === 'string' && /^(username|emails\.value)$/i.test(f.attrPath)) return f.compValue;
  if (f.op === 'and') for (const g of f.filters) if (requiredEmail(g) !== undefined) return requiredEmail(g);
  return undefined;
}

export interface CompiledFilter {
  matches: Predicate;
  /** Set when every match has this work email (ignoring case). */
  email?: string;
}

/** The predicate of a filter, or a 400 invalidFilter saying what is wrong with it. */
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
  return { matches: compile(ast, 0), email: requiredEmail(ast) };
}
