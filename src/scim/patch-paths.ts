/**
 * The paths a PATCH of a User may name (RFC 7644 §3.5.2: attrPath, valuePath), checked against
 * the User schema before scim-patch applies anything. scim-patch walks each name of a path, and
 * each key of a value without a path, as a property key of the User: a name it was never meant
 * to walk (`__proto__`, `constructor`, `prototype`) reaches Object.prototype, which every object
 * of the process shares (issue 56). So a path is handed on only rebuilt from the schema's own
 * spelling of each name, and an attribute wsops accepts and ignores is left out altogether.
 *
 * The attributes are users.ts's own lists, kept and ignored, with the sub-attributes it reads.
 */
import { namesPrototype } from '../text-rules.js';
import { invalidPath } from './errors.js';
import {
  ENTERPRISE_KEPT,
  ENTERPRISE_PARTS,
  ENTERPRISE_SCHEMA,
  ENTRY_PARTS,
  IGNORED,
  IGNORED_MULTI_VALUED,
  KEPT,
  MANAGER_PARTS,
  NAME_PARTS,
  USER_SCHEMA,
} from './users.js';

interface Attribute {
  /** The sub-attributes wsops reads; absent: a simple attribute. */
  parts?: readonly string[];
  /** Multi-valued: a filter in brackets selects entries. */
  multiValued?: true;
  /** Accepted and never stored: whatever it holds is dropped, so any well-formed sub-path is taken. */
  ignored?: true;
}

const ignored = (name: string): Attribute =>
  (IGNORED_MULTI_VALUED as readonly string[]).includes(name) ? { ignored: true, multiValued: true } : { ignored: true };
const kept = (name: string): Attribute =>
  name === 'emails' || name === 'phoneNumbers' ? { parts: ENTRY_PARTS, multiValued: true } : name === 'name' ? { parts: NAME_PARTS } : {};

const CORE: Readonly<Record<string, Attribute>> = Object.fromEntries([
  ...KEPT.map((name) => [name, kept(name)]),
  ...IGNORED.map((name) => [name, ignored(name)]),
]);

const ENTERPRISE: Readonly<Record<string, Attribute>> = Object.fromEntries(
  ENTERPRISE_PARTS.map((name) => [
    name,
    name === 'manager' ? { parts: MANAGER_PARTS } : (ENTERPRISE_KEPT as readonly string[]).includes(name) ? {} : { ignored: true },
  ]),
);

/** Lower-cased name to its declared spelling and attribute: SCIM attribute names ignore case. */
function byLowerName(attributes: Readonly<Record<string, Attribute>>): Map<string, [string, Attribute]> {
  return new Map(Object.entries(attributes).map(([name, a]) => [name.toLowerCase(), [name, a]]));
}
const CORE_BY_LOWER = byLowerName(CORE);
const ENTERPRISE_BY_LOWER = byLowerName(ENTERPRISE);

const NAME = '[A-Za-z$][\\w$-]*';
/** attribute, attribute.part, attribute[filter], attribute[filter].part (after a schema URN). */
const PATH = new RegExp(`^(${NAME})(?:\\[([^\\[\\]]+)\\])?(?:\\.(${NAME}))?$`);
const QUOTED = /"(?:[^"\\]|\\.)*"/g;
const FILTER_NAME = /[A-Za-z_$][\w$.-]*/g;
const FILTER_WORDS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'pr', 'and', 'or', 'not', 'true', 'false', 'null']);

/**
 * Whether any name of a path or key, split at every character a name cannot hold, names the
 * prototype. Quoted filter values are read too: scim-patch splits a path at its periods by a
 * guess about quotes, so a name inside quotes is not sure to stay a value.
 */
export function pathNamesPrototype(path: string): boolean {
  return path.split(/[^\w$]+/).some(namesPrototype);
}

/** The names a filter compares must be parts of the attribute it selects entries of. */
function checkFilter(filter: string, name: string, attribute: Attribute, where: string): void {
  for (const word of filter.replace(QUOTED, '""').match(FILTER_NAME) ?? []) {
    const lower = word.toLowerCase();
    if (FILTER_WORDS.has(lower) || attribute.parts?.some((p) => p.toLowerCase() === lower)) continue;
    throw invalidPath(
      `${where} filters ${name} on ${JSON.stringify(word.slice(0, 60))}; its entries have ${attribute.parts?.join(', ') ?? 'no sub-attributes'}.`,
    );
  }
}

/**
 * The path to hand to scim-patch for `path`, or undefined when it names an attribute wsops
 * ignores (the operation is then left out: nothing of it would be stored). `filters`: false for
 * a key of a value without a path, where scim-patch takes no brackets. Anything else is 400
 * invalidPath naming `where`.
 */
export function checkedPath(path: string, where: string, filters = true): string | undefined {
  if (pathNamesPrototype(path)) {
    throw invalidPath(`${where} names __proto__, constructor or prototype, which no attribute is; nothing was applied.`);
  }
  const lower = path.toLowerCase();
  let enterprise = false;
  let rest = path;
  if (lower.startsWith('urn:')) {
    if (lower.startsWith(`${ENTERPRISE_SCHEMA.toLowerCase()}:`)) {
      enterprise = true;
      rest = path.slice(ENTERPRISE_SCHEMA.length + 1);
    } else if (lower.startsWith(`${USER_SCHEMA.toLowerCase()}:`)) {
      rest = path.slice(USER_SCHEMA.length + 1);
    } else {
      throw invalidPath(`${where} names a schema wsops does not have; it has ${USER_SCHEMA} and ${ENTERPRISE_SCHEMA}.`);
    }
  }
  // scim-patch reads a path's last colon as the end of its schema URN, wherever it stands.
  if (rest.includes(':')) throw invalidPath(`${where} has a colon after its schema URN, which no attribute or filter of wsops holds.`);
  const m = PATH.exec(rest);
  if (!m) {
    throw invalidPath(
      `${where} must be attribute, attribute.subAttribute or attribute[filter].subAttribute (optionally after the schema URN and a colon).`,
    );
  }
  const [, given = '', filter, part] = m;
  const found = (enterprise ? ENTERPRISE_BY_LOWER : CORE_BY_LOWER).get(given.toLowerCase());
  if (!found) {
    throw invalidPath(
      `${where} names no attribute ${JSON.stringify(given.slice(0, 60))}; wsops keeps ${KEPT.join(', ')} and the enterprise employeeNumber and manager.`,
    );
  }
  const [name, attribute] = found;
  if (filter !== undefined && !(filters && attribute.multiValued)) {
    throw invalidPath(
      `${where} filters ${name}, which is not a multi-valued attribute${filters ? '' : ' (and a key of a value takes no filter)'}.`,
    );
  }
  if (attribute.ignored) return undefined;
  let declaredPart: string | undefined;
  if (part !== undefined) {
    declaredPart = attribute.parts?.find((p) => p.toLowerCase() === part.toLowerCase());
    if (declaredPart === undefined) {
      throw invalidPath(
        `${where} names ${name}.${part.slice(0, 60)}; ${name} has ${attribute.parts ? `the sub-attributes ${attribute.parts.join(', ')}` : 'no sub-attributes'}.`,
      );
    }
  }
  if (filter !== undefined) checkFilter(filter, name, attribute, where);
  return `${enterprise ? `${ENTERPRISE_SCHEMA}:` : ''}${name}${filter !== undefined ? `[${filter}]` : ''}${declaredPart !== undefined ? `.${declaredPart}` : ''}`;
}
