/**
 * What a list request asks for: its query parameters, checked (`parseListQuery`), the digest
 * of the filters that select its records, and the signed cursor that carries a walk from one
 * page to the next (`CursorCodec`).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
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

/** `limit`: 1..MAX_LIMIT, DEFAULT_LIMIT when absent. */
export function readLimit(query: RawQuery): number {
  const rawLimit = single(query, 'limit');
  if (rawLimit === undefined) return DEFAULT_LIMIT;
  if (!LIMIT_DIGITS.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > MAX_LIMIT) {
    throw bad('limit', `limit must be a whole number from 1 to ${MAX_LIMIT}; got "${truncate(rawLimit)}"`);
  }
  return Number(rawLimit);
}

/** An instant parameter (`updated_since`, the deletions feed's `since`), normalized to ISO 8601 UTC with milliseconds. */
export function readInstant(query: RawQuery, name: string): string | undefined {
  const raw = single(query, name);
  if (raw === undefined) return undefined;
  const ms = parseInstant(raw.replace(SPACE_FOR_PLUS_OFFSET, '+$1'));
  if (ms === undefined) {
    throw bad(name, `${name} must be an ISO 8601 instant with a UTC offset, such as 2026-11-22T07:43:00.123Z; got "${truncate(raw)}"`);
  }
  return new Date(ms).toISOString();
}

/** The cursor parameter, given once and non-empty. */
export function readCursor(query: RawQuery): string | undefined {
  return single(query, 'cursor');
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

  const limit = readLimit(query);
  const updatedSince = readInstant(query, 'updated_since');

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

/** A cursor finishes a walk; resuming later is what `updated_since` is for. */
export const CURSOR_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** Clock difference tolerated between API nodes: a cursor issued later than this is refused. */
export const CURSOR_CLOCK_SKEW_MS = 60 * 1000;
/** base64url payload, a dot, and exactly the 22 characters of a 16-byte MAC: nothing before or after. */
const CURSOR_SHAPE = /^[A-Za-z0-9_-]{1,1000}\.[A-Za-z0-9_-]{22}$/;

interface CursorPayload {
  v: 1;
  /** workspace */
  w: string;
  /** register path */
  r: string;
  /** last (updated_at, id) of the page it follows */
  u: string;
  i: string;
  /** digest of the filters, search and updated_since it was issued under */
  f: string;
  /** issue time, ms */
  t: number;
}

export interface CursorPosition {
  updatedAt: string;
  id: string;
}

/** Canonical digest of everything that selects records; `limit` is deliberately not in it. */
export function filterDigest(parts: Record<string, string | undefined>): string {
  const canonical = Object.keys(parts)
    .sort()
    .filter((k) => parts[k] !== undefined)
    .map((k) => [k, parts[k]]);
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 22);
}

export class CursorCodec {
  private readonly key: Buffer;

  constructor(serverSecret: string) {
    // A key of its own, derived from the server secret, so cursors never share a key with anything else.
    this.key = createHmac('sha256', serverSecret).update('wsops cursor v1').digest();
  }

  private sign(body: string): Buffer {
    return createHmac('sha256', this.key).update(body).digest().subarray(0, 16);
  }

  encode(p: { workspaceId: string; register: string; position: CursorPosition; digest: string; issuedAt: number }): string {
    const payload: CursorPayload = {
      v: 1,
      w: p.workspaceId,
      r: p.register,
      u: p.position.updatedAt,
      i: p.position.id,
      f: p.digest,
      t: p.issuedAt,
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(body).toString('base64url')}`;
  }

  /**
   * Checks, in order: exact shape and signature (invalid_cursor), workspace and register
   * (invalid_cursor: a cursor of another workspace must not even say that it was valid there),
   * an issue time no later than now plus the clock skew (invalid_cursor), age
   * (cursor_expired), then the filters (cursor_filters_mismatch).
   */
  decode(
    cursor: string,
    expect: { workspaceId: string; register: string; digest: string; now: number; resumeWith?: string },
  ): CursorPosition {
    const invalid = () =>
      new AppError('invalid_cursor', 'cursor is not one this API issued (was it edited or truncated?); start again without cursor', {
        param: 'cursor',
      });
    if (cursor.length > 1024 || !CURSOR_SHAPE.test(cursor)) throw invalid();
    const dot = cursor.indexOf('.');
    const body = cursor.slice(0, dot);
    // The MAC's text is compared, not its decoded bytes: the last base64url character has
    // spare bits, and a cursor that differs in them is still an edited cursor.
    const mac = Buffer.from(cursor.slice(dot + 1), 'latin1');
    const expected = Buffer.from(this.sign(body).toString('base64url'), 'latin1');
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) throw invalid();
    let p: CursorPayload;
    try {
      p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
    } catch {
      throw invalid();
    }
    if (p.v !== 1 || typeof p.u !== 'string' || typeof p.i !== 'string' || typeof p.t !== 'number') throw invalid();
    if (p.w !== expect.workspaceId || p.r !== expect.register) throw invalid();
    // Issued "in the future" (a server with a clock far ahead, or a forged issue time under a
    // leaked secret) would otherwise never expire.
    if (!Number.isFinite(p.t) || p.t > expect.now + CURSOR_CLOCK_SKEW_MS) throw invalid();
    if (expect.now - p.t > CURSOR_LIFETIME_MS) {
      throw new AppError(
        'cursor_expired',
        `cursor is older than 24 hours; cursors finish a walk, they do not resume one: restart the walk, or resume with ${expect.resumeWith ?? 'updated_since'}`,
        { param: 'cursor' },
      );
    }
    if (p.f !== expect.digest) {
      throw new AppError(
        'cursor_filters_mismatch',
        `cursor was issued with different ${expect.resumeWith === undefined ? 'filters, search or updated_since' : expect.resumeWith}; send the same parameters as the first page (only limit may change)`,
        { param: 'cursor' },
      );
    }
    return { updatedAt: p.u, id: p.i };
  }
}
