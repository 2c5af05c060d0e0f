/**
 * Read-ahead of walks (ADR 17). A client walking a register asks for one page after another,
 * each with the cursor of the last, and between two requests it is busy receiving and reading
 * the page it got. When a request continues a walk this process answered, or starts an
 * `updated_since` sync (`startsSync`), the page after it is read on the event loop right after
 * this response goes out, while the client is busy; the next request takes it (PageReader in pages.ts).
 *
 * Never stale (`Currency`). SQLite: an entry keeps the data version from before its read and is
 * used only while that version is still current (`PRAGMA data_version` on the event loop's read
 * connection moves with every commit of any connection, this process's or another's).
 * PostgreSQL: the page's own statement returns its snapshot, and the entry is used only if the
 * snapshot read when its request arrives is the same: the same snapshot sees the same rows, and
 * any transaction that wrote since (anywhere in the cluster) changes it.
 * Bounded: at most MAX_ENTRIES pages and MAX_BYTES held, each for at most TTL_MS. The page read ahead is the page the request would
 * have read, byte for byte, except that its next cursor carries the issue time of the request
 * before it (at most TTL_MS earlier).
 */

import type { Currency } from '../store/database.js';
import type { CursorPosition } from './list-query.js';

/** How long a page read ahead waits for its request; a client that takes longer reads it again. */
export const READ_AHEAD_TTL_MS = 5000;
const MAX_ENTRIES = 32;
const MAX_BYTES = 32 * 1024 * 1024;
/** Walks remembered as "this process answered the page before". */
const MAX_FOLLOWED = 1024;

/** What read-ahead reads of a page's job (PageJob in pages.ts). */
export interface AheadJob {
  workspaceId: string;
  /** The register's path. */
  register: string;
  /** Digest of the filters. */
  digest: string;
  after?: CursorPosition;
  limit: number;
  updatedSince?: string;
  withSnapshot?: boolean;
}

/** What read-ahead keeps of a page read (PageBody in pages.ts). */
export interface AheadPage {
  body: Buffer;
  /** The snapshot the page was read in (a `snapshot` currency). */
  snapshot?: string;
}

interface Entry<P> {
  page: Promise<P>;
  /** The data version before the read (`data-version` only; a snapshot comes with the page). */
  version: number | undefined;
  at: number;
  bytes: number;
}

const MISSED: Promise<undefined> = Promise.resolve(undefined);

/**
 * Everything that selects a page's bytes except the issue time: workspace, register, filters (as
 * their digest), position, size (the body is the identity one; compression comes after). Joined with NUL, which none of them can hold (ids,
 * timestamps and digests are checked shapes): cheaper than JSON, and still unambiguous.
 */
export function pageKey<J extends AheadJob>(job: J, after: CursorPosition | undefined = job.after): string {
  return `${job.workspaceId}\0${job.register}\0${job.digest}\0${after ? `${after.updatedAt}\0${after.id}` : '\0'}\0${job.limit}`;
}

/**
 * The first page of an `updated_since` sync. A sync reads on until `has_more` is false (the
 * contract's incremental sync), so its second page is as sure to be asked for as any page of a
 * walk already under way; other first pages (a list shown to a person, a poll for the newest
 * records) often stop there, and are not yet a walk.
 */
export function startsSync(job: AheadJob): boolean {
  return job.after === undefined && job.updatedSince !== undefined;
}

export class ReadAhead<J extends AheadJob = AheadJob, P extends AheadPage = AheadPage> {
  private readonly entries = new Map<string, Entry<P>>();
  /** Keys of pages a next cursor this process handed out points to, with when. */
  private readonly followed = new Map<string, number>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(
    /** How a page is known to be current; none means no read-ahead. */
    private readonly currency: Currency | undefined,
    /** Monotonic milliseconds. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** False without a currency, or once it proved unusable: the reader then skips all of this. */
  get enabled(): boolean {
    const currency = this.currency;
    return currency !== undefined && (currency.kind === 'data-version' || (currency.usable?.() ?? true));
  }

  /**
   * The page read ahead for `key`, handed out once: undefined when there is none, else a promise
   * of the page, or of undefined when it is stale or its read failed (the request then reads it).
   */
  take(key: string): Promise<P | undefined> | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.drop(key, entry);
    const currency = this.currency;
    if (!currency || this.now() - entry.at > READ_AHEAD_TTL_MS) return this.miss();
    if (currency.kind === 'data-version') {
      if (entry.version !== currency.read()) return this.miss();
      this.hits++;
      return entry.page.catch(() => undefined);
    }
    return Promise.all([entry.page, currency.read()]).then(
      ([page, snapshot]) => {
        if (page.snapshot === undefined || page.snapshot !== snapshot) return this.miss();
        this.hits++;
        return page;
      },
      () => this.miss(),
    );
  }

  private miss(): Promise<undefined> {
    this.misses++;
    return MISSED;
  }

  /** Whether the request for `key` continues a walk this process answered. */
  follows(key: string): boolean {
    const at = this.followed.get(key);
    return at !== undefined && this.now() - at <= READ_AHEAD_TTL_MS;
  }

  /**
   * After answering `job` with a page that has a next one: remembers the walk and, when `read`
   * is given (the walk is one this process follows), reads the next page with it.
   */
  answered(job: J, next: CursorPosition, read: ((job: J) => Promise<P>) | undefined): void {
    this.expire();
    const key = pageKey(job, next);
    this.followed.delete(key);
    this.followed.set(key, this.now());
    if (this.followed.size > MAX_FOLLOWED) this.followed.delete(this.followed.keys().next().value as string);
    const currency = this.currency;
    if (!read || !currency || this.entries.has(key) || this.entries.size >= MAX_ENTRIES || this.bytes >= MAX_BYTES) return;
    // The data version is read before the page: a commit between this read and the page's
    // snapshot only makes the entry unusable. A snapshot comes with the page itself.
    const snapshot = currency.kind === 'snapshot';
    const version = snapshot ? undefined : currency.read();
    const entry: Entry<P> = {
      page: read({ ...job, after: next, ...(snapshot ? { withSnapshot: true } : {}) }),
      version,
      at: this.now(),
      bytes: 0,
    };
    this.entries.set(key, entry);
    entry.page.then(
      (page) => {
        if (this.entries.get(key) !== entry) return;
        entry.bytes = page.body.length;
        this.bytes += entry.bytes;
        if (this.bytes > MAX_BYTES) this.drop(key, entry);
      },
      () => {
        if (this.entries.get(key) === entry) this.drop(key, entry);
      },
    );
  }

  /** Pages held (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.followed.clear();
    this.bytes = 0;
  }

  private drop(key: string, entry: Entry<P>): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  private expire(): void {
    const oldest = this.now() - READ_AHEAD_TTL_MS;
    for (const [key, entry] of this.entries) if (entry.at < oldest) this.drop(key, entry);
    for (const [key, at] of this.followed) {
      if (at >= oldest) break;
      this.followed.delete(key);
    }
  }
}
