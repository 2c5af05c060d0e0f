import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.js';

/** A cursor finishes a walk; resuming later is what `updated_since` is for. */
export const CURSOR_LIFETIME_MS = 24 * 60 * 60 * 1000;

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
   * Checks, in order: signature (invalid_cursor), workspace and register (invalid_cursor: a
   * cursor of another workspace must not even say that it was valid there), age
   * (cursor_expired), then the filters (cursor_filters_mismatch).
   */
  decode(cursor: string, expect: { workspaceId: string; register: string; digest: string; now: number }): CursorPosition {
    const invalid = () =>
      new AppError('invalid_cursor', 'cursor is not one this API issued (was it edited or truncated?); start again without cursor', {
        param: 'cursor',
      });
    if (cursor.length > 1024) throw invalid();
    const dot = cursor.indexOf('.');
    if (dot <= 0) throw invalid();
    const body = cursor.slice(0, dot);
    const mac = Buffer.from(cursor.slice(dot + 1), 'base64url');
    const expected = this.sign(body);
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) throw invalid();
    let p: CursorPayload;
    try {
      p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
    } catch {
      throw invalid();
    }
    if (p.v !== 1 || typeof p.u !== 'string' || typeof p.i !== 'string' || typeof p.t !== 'number') throw invalid();
    if (p.w !== expect.workspaceId || p.r !== expect.register) throw invalid();
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
