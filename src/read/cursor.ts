import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.js';

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
  decode(cursor: string, expect: { workspaceId: string; register: string; digest: string; now: number }): CursorPosition {
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
        'cursor is older than 24 hours; cursors finish a walk, they do not resume one: restart the walk, or resume with updated_since',
        { param: 'cursor' },
      );
    }
    if (p.f !== expect.digest) {
      throw new AppError(
        'cursor_filters_mismatch',
        'cursor was issued with different filters, search or updated_since; send the same parameters as the first page (only limit may change)',
        { param: 'cursor' },
      );
    }
    return { updatedAt: p.u, id: p.i };
  }
}
