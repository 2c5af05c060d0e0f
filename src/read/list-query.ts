import { AppError } from '../errors.js';
import type { Register } from '../registers/define.js';
import { idPattern } from '../registers/fields.js';
import { searchWords } from '../store/search-text.js';
import { parseInstant } from './timestamp.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
export const MAX_SEARCH_LENGTH = 200;
export const MAX_SEARCH_WORDS = 10;

export type RawQuery = Record<string, string | string[] | undefined>;

export interface ListParams {
  limit: number;
  cursor: string | undefined;
  updatedSince: string | undefined;
  search: readonly string[];
  filters: Partial<Record<string, string>>;
}

const COMMON = ['limit', 'cursor', 'updated_since', 'search'];
/** At most 7 digits: the range check below then works on a safe integer. */
const LIMIT_DIGITS = /^[0-9]{1,7}$/;
/** An unencoded `+` in a query string arrives as a space: ` 01:00` at the end is the offset `+01:00`. */
const SPACE_FOR_PLUS_OFFSET = / (\d{2}(?::?\d{2})?)$/;

/**
 * The parameters each register's list accepts, built once: `rejectUnknown` runs on every
 * request and must not build them again.
 */
const ALLOWED = new WeakMap<Register, string[]>();

function bad(param: string, message: string): AppError {
  return new AppError('invalid_parameter', message, { param });
}

/** Every query parameter must be named, given once, and non-empty. */
function single(query: RawQuery, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw bad(name, `${name} was given ${value.length} times; give it once`);
  if (value.length === 0) throw bad(name, `${name} is empty; give a value or leave the parameter out`);
  return value;
}

export function rejectUnknown(query: RawQuery, allowed: readonly string[]): void {
  for (const name of Object.keys(query)) {
    if (!allowed.includes(name)) {
      const hint = allowed.length ? `accepted parameters are: ${allowed.join(', ')}` : 'this operation takes no query parameters';
      throw new AppError('unknown_parameter', `unknown query parameter "${truncate(name)}"; ${hint}`, { param: truncate(name) });
    }
  }
}

function truncate(s: string): string {
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}

export function allowedParams(register: Register): readonly string[] {
  let allowed = ALLOWED.get(register);
  if (!allowed) {
    allowed = [...COMMON.filter((p) => p !== 'search' || register.search.length > 0), ...register.filters];
    ALLOWED.set(register, allowed);
  }
  return allowed;
}

/** Validates a list request's query for one register, with a message that says how to fix it. */
export function parseListQuery(register: Register, query: RawQuery): ListParams {
  if (query.search !== undefined && register.search.length === 0) {
    throw new AppError(
      'search_not_supported',
      `/api/v1/${register.path} does not support search; filter with updated_since or its filters instead`,
      {
        param: 'search',
      },
    );
  }
  rejectUnknown(query, allowedParams(register));

  let limit = DEFAULT_LIMIT;
  const rawLimit = single(query, 'limit');
  if (rawLimit !== undefined) {
    if (!LIMIT_DIGITS.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > MAX_LIMIT) {
      throw bad('limit', `limit must be a whole number from 1 to ${MAX_LIMIT}; got "${truncate(rawLimit)}"`);
    }
    limit = Number(rawLimit);
  }

  let updatedSince: string | undefined;
  const rawSince = single(query, 'updated_since');
  if (rawSince !== undefined) {
    const ms = parseInstant(rawSince.replace(SPACE_FOR_PLUS_OFFSET, '+$1'));
    if (ms === undefined) {
      throw bad(
        'updated_since',
        `updated_since must be an ISO 8601 instant with a UTC offset, such as 2026-11-22T07:43:00.123Z; got "${truncate(rawSince)}"`,
      );
    }
    updatedSince = new Date(ms).toISOString();
  }

  let search: string[] = [];
  const rawSearch = single(query, 'search');
  if (rawSearch !== undefined) {
    if (rawSearch.length > MAX_SEARCH_LENGTH) throw bad('search', `search must be at most ${MAX_SEARCH_LENGTH} characters`);
    search = [...new Set(searchWords(rawSearch))];
    if (search.length === 0) throw bad('search', 'search must contain at least one letter or digit');
    if (search.length > MAX_SEARCH_WORDS) throw bad('search', `search may hold at most ${MAX_SEARCH_WORDS} words`);
  }

  const filters: Partial<Record<string, string>> = {};
  for (const name of register.filters) {
    const value = single(query, name);
    if (value === undefined) continue;
    const field = register.fields[name];
    if (field?.values) {
      if (!field.values.includes(value)) {
        throw bad(name, `${name} must be one of ${field.values.join(', ')}; got "${truncate(value)}"`);
      }
    } else if (field?.ref) {
      if (!idPattern(field.ref).test(value)) {
        throw bad(name, `${name} must be an id of the form ${field.ref}_…; got "${truncate(value)}"`);
      }
    }
    filters[name] = value;
  }

  return { limit, cursor: single(query, 'cursor'), updatedSince, search, filters };
}
