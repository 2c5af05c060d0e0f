/**
 * A full disk and a lost database, said as such. A write that fails because the database's disk
 * is full (SQLite's SQLITE_FULL, PostgreSQL's 53100 disk_full, an ENOSPC) or because the
 * connection to the database was lost (PostgreSQL ended the session, restarted, or cannot be
 * reached) becomes a StorageFault with its cause named: the HTTP edge answers 503 with its own
 * problem type and Retry-After, the CLI prints one line, and readiness is false while the faults
 * go on (each open database keeps a StorageHealth, fed by its record writes).
 */

export type StorageFaultKind = 'full' | 'lost';

/** How long after the last fault readiness stays false, and what Retry-After says. */
export const STORAGE_RETRY_AFTER_SECONDS = 30;

const FULL_SQLSTATES = new Set(['53100']);
/** Sessions ended or never reached: admin shutdown, crash shutdown, cannot connect now, connection failures. */
const LOST_SQLSTATES = new Set(['57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004']);
const LOST_ERRNOS = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);
/** pg's own words when a session it held is gone (it gives those errors no code). */
const LOST_MESSAGES =
  /Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|connection ended/i;

export class StorageFault extends Error {
  constructor(
    readonly kind: StorageFaultKind,
    /** The database's own words: `SQLITE_FULL: database or disk is full`, `53100: could not extend file`. */
    readonly reason: string,
  ) {
    super(
      kind === 'full'
        ? `the database's disk is full (${reason}): nothing of the failed write was stored; free space on the database's volume, then retry`
        : `the connection to the database was lost (${reason}): the write under way was not confirmed; retry once the database is back`,
    );
    this.name = 'StorageFault';
  }

  /** Its problem code in the error catalogue (src/errors.ts). */
  get code(): 'storage_full' | 'database_unavailable' {
    return this.kind === 'full' ? 'storage_full' : 'database_unavailable';
  }
}

/** `err` as a StorageFault when it is one (already, or by its code), else undefined. */
export function storageFaultOf(err: unknown): StorageFault | undefined {
  if (err instanceof StorageFault) return err;
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message.replace(/\s+/g, ' ').slice(0, 200) : String(err);
  const reason = code ? `${code}: ${message}` : message;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || (code !== undefined && FULL_SQLSTATES.has(code)))
    return new StorageFault('full', reason);
  if (code !== undefined && (LOST_SQLSTATES.has(code) || LOST_ERRNOS.has(code))) return new StorageFault('lost', reason);
  if (code === undefined && LOST_MESSAGES.test(message)) return new StorageFault('lost', reason);
  return undefined;
}

/** The faults of one open database: what readiness reports. */
export class StorageHealth {
  private last: { fault: StorageFault; at: number } | undefined;

  /** A write failed with `fault`. */
  failed(fault: StorageFault, now = Date.now()): void {
    this.last = { fault, at: now };
  }

  /** A write committed: the fault is over. */
  succeeded(): void {
    this.last = undefined;
  }

  /** The fault going on now: one within the retry window and not followed by a committed write. */
  current(now = Date.now()): StorageFault | undefined {
    if (!this.last || now - this.last.at > STORAGE_RETRY_AFTER_SECONDS * 1000) return undefined;
    return this.last.fault;
  }
}

/** Runs a write, feeding `health`; a storage fault is rethrown as a StorageFault. */
export async function watchedWrite<T>(health: StorageHealth, write: () => Promise<T>): Promise<T> {
  try {
    const result = await write();
    health.succeeded();
    return result;
  } catch (err) {
    const fault = storageFaultOf(err);
    if (!fault) throw err;
    health.failed(fault);
    throw fault;
  }
}
