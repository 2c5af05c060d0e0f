/**
 * Read-ahead of walks (ADR 17). A client walking a register asks for one page after another,
 * each with the cursor of the last, and between two requests it is busy receiving and reading
 * the page it got. When a request continues a walk this process answered, the page after it is
 * read at once on an idle page thread, while the client is busy; the next request takes it.
 *
 * Never stale: an entry keeps the database's data version from before its read and is used only
 * while that version is still current (SQLite's `PRAGMA data_version` on the event loop's read
 * connection moves with every commit of any connection, this process's or another's). Without a
 * data version (PostgreSQL) nothing is read ahead.
 * Never in the way: only when a thread has nothing else to do, at most MAX_ENTRIES pages and
 * MAX_BYTES held, each for at most TTL_MS. The page read ahead is the page the request would
 * have read, byte for byte, except that its next cursor carries the issue time of the request
 * before it (at most TTL_MS earlier).
 */
import type { CursorPosition } from './cursor.js';
import type { PageBody, PageJob } from './page-body.js';

/** How long a page read ahead waits for its request; a client that takes longer reads it again. */
export const READ_AHEAD_TTL_MS = 5000;
const MAX_ENTRIES = 32;
const MAX_BYTES = 32 * 1024 * 1024;
/** Walks remembered as "this process answered the page before". */
const MAX_FOLLOWED = 1024;

interface Entry {
  page: Promise<PageBody>;
  version: number;
  at: number;
  bytes: number;
}

/**
 * Everything that selects a page's bytes except the issue time: workspace, register, filters (as
 * their digest), position, size, coding. Joined with NUL, which none of them can hold (ids,
 * timestamps and digests are checked shapes): cheaper than JSON, and still unambiguous.
 */
export function pageKey(job: PageJob, after: CursorPosition | undefined = job.after): string {
  return `${job.workspaceId}\0${job.register}\0${job.digest}\0${after ? `${after.updatedAt}\0${after.id}` : '\0'}\0${job.limit}\0${job.coding}`;
}

export class ReadAhead {
  private readonly entries = new Map<string, Entry>();
  /** Keys of pages a next cursor this process handed out points to, with when. */
  private readonly followed = new Map<string, number>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(
    /** The database's data version now; none (PostgreSQL) means no read-ahead. */
    private readonly dataVersion: (() => number) | undefined,
    /** Monotonic milliseconds. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** False without a data version: the reader then skips all of this. */
  get enabled(): boolean {
    return this.dataVersion !== undefined;
  }

  /** The page read ahead for `key`, if it is still current; it is handed out once. */
  take(key: string): Promise<PageBody> | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.drop(key, entry);
    if (this.now() - entry.at > READ_AHEAD_TTL_MS || entry.version !== this.dataVersion?.()) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    return entry.page;
  }

  /** Whether the request for `key` continues a walk this process answered. */
  follows(key: string): boolean {
    const at = this.followed.get(key);
    return at !== undefined && this.now() - at <= READ_AHEAD_TTL_MS;
  }

  /**
   * After answering `job` with a page that has a next one: remembers the walk and, when `read`
   * is given (the walk is one this process follows and a thread is idle), reads the next page
   * with it now.
   */
  answered(job: PageJob, next: CursorPosition, read: ((job: PageJob) => Promise<PageBody>) | undefined): void {
    this.expire();
    const key = pageKey(job, next);
    this.followed.delete(key);
    this.followed.set(key, this.now());
    if (this.followed.size > MAX_FOLLOWED) this.followed.delete(this.followed.keys().next().value as string);
    if (!read || !this.dataVersion || this.entries.has(key) || this.entries.size >= MAX_ENTRIES || this.bytes >= MAX_BYTES) return;
    // Read before the page: a commit between this read and the page's snapshot only makes the entry unusable.
    const version = this.dataVersion();
    const entry: Entry = { page: read({ ...job, after: next }), version, at: this.now(), bytes: 0 };
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

  private drop(key: string, entry: Entry): void {
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
