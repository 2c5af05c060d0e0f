/** The query of a SCIM read: paging (RFC 7644 §3.4.2.4) and which attributes to return (§3.4.2.5). */

import { MAX_RESULTS } from './discovery.js';
import { invalidValue } from './errors.js';
import { ENTERPRISE_SCHEMA } from './users.js';

export interface ListQuery {
  filter?: string;
  startIndex: number;
  count: number;
  attributes?: string[];
  excludedAttributes?: string[];
}

const LIST_PARAMS = ['filter', 'startIndex', 'count', 'attributes', 'excludedAttributes', 'sortBy', 'sortOrder'];
const ONE_PARAMS = ['attributes', 'excludedAttributes'];

function integer(name: string, value: string): number {
  if (!/^-?\d{1,12}$/.test(value)) throw invalidValue(`${name} must be an integer.`);
  return Number(value);
}

function names(value: string | undefined, param: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (value.length > 1000) throw invalidValue(`${param} is longer than 1000 characters.`);
  return value
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
}

/**
 * Each known parameter at most once; an unknown one is refused (a typo must not widen what is
 * read). sortBy and sortOrder are accepted and ignored: sorting is not supported (the
 * ServiceProviderConfig says so) and results come in id order. A count above the maximum is
 * lowered to it and a negative one raised to 0, as RFC 7644 asks.
 */
export function readQuery(query: unknown, list: boolean): ListQuery {
  const allowed = list ? LIST_PARAMS : ONE_PARAMS;
  const q: Record<string, string> = {};
  for (const [k, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    const shown = JSON.stringify(k.slice(0, 40));
    const known = allowed.find((a) => a.toLowerCase() === k.toLowerCase());
    if (!known) throw invalidValue(`Unknown query parameter ${shown}; this endpoint takes ${allowed.join(', ')}.`);
    if (typeof v !== 'string') throw invalidValue(`${known} is given more than once.`);
    q[known] = v;
  }
  const count = q.count === undefined ? MAX_RESULTS : Math.min(MAX_RESULTS, Math.max(0, integer('count', q.count)));
  const startIndex = q.startIndex === undefined ? 1 : Math.max(1, integer('startIndex', q.startIndex));
  return {
    filter: q.filter,
    startIndex,
    count,
    attributes: names(q.attributes, 'attributes'),
    excludedAttributes: names(q.excludedAttributes, 'excludedAttributes'),
  };
}

/** The top-level attribute an attribute path is under (`name.givenName` -> `name`), lower-cased. */
function topOf(path: string): string {
  const lower = path.toLowerCase();
  if (lower.startsWith(ENTERPRISE_SCHEMA.toLowerCase())) return ENTERPRISE_SCHEMA.toLowerCase();
  return lower.replace(/^urn:ietf:params:scim:schemas:core:2\.0:user:/, '').split('.')[0] as string;
}

/** The resource with only the attributes asked for (id and schemas always), or without the excluded ones. */
export function project(
  resource: Record<string, unknown>,
  q: Pick<ListQuery, 'attributes' | 'excludedAttributes'>,
): Record<string, unknown> {
  if (q.attributes?.length) {
    const keep = new Set([...q.attributes.map(topOf), 'id', 'schemas']);
    return Object.fromEntries(Object.entries(resource).filter(([k]) => keep.has(k.toLowerCase())));
  }
  if (q.excludedAttributes?.length) {
    const drop = new Set(q.excludedAttributes.map(topOf));
    drop.delete('id');
    drop.delete('schemas');
    return Object.fromEntries(Object.entries(resource).filter(([k]) => !drop.has(k.toLowerCase())));
  }
  return resource;
}
