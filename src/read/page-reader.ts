/**
 * Reads list pages on the event loop (ADR 25: the page threads of ADR 16 are gone). With a
 * currency (read-ahead.ts), the page after one that continues a walk is read ahead while the
 * client receives the current one; without, every page is read when it is asked for.
 */
import type { PageQueries } from '../store/page-queries.js';
import type { CursorCodec } from './cursor.js';
import { type PageBody, type PageJob, readPageBody } from './page-body.js';
import { type Currency, pageKey, ReadAhead, startsSync } from './read-ahead.js';

export class PageReader {
  readonly readAhead: ReadAhead;

  constructor(
    readonly queries: PageQueries,
    private readonly cursors: CursorCodec,
    /** How read-ahead tells a page is still current; without it nothing is read ahead. */
    currency?: Currency,
  ) {
    this.readAhead = new ReadAhead(currency);
  }

  /**
   * Reads a page: the one read ahead for it when there is one and it is current, else now. A
   * page that continues a walk this process answered, or that starts an `updated_since` sync,
   * has its next page read ahead once this response is on its way (`setImmediate`: after the
   * event loop has written it and taken what else is waiting).
   */
  async read(job: PageJob): Promise<PageBody> {
    if (!this.readAhead.enabled) return readPageBody(this.queries, this.cursors, job);
    const key = pageKey(job);
    const ahead = this.readAhead.take(key);
    const following = ahead !== undefined || this.readAhead.follows(key) || startsSync(job);
    // A page read ahead that is stale, or whose read failed, is read again now.
    const page = (ahead && (await ahead)) ?? (await readPageBody(this.queries, this.cursors, job));
    if (page.next) this.readAhead.answered(job, page.next, following ? this.readLater : undefined);
    return page;
  }

  private readonly readLater = (job: PageJob): Promise<PageBody> =>
    new Promise((resolve) => setImmediate(resolve)).then(() => readPageBody(this.queries, this.cursors, job));

  close(): void {
    this.readAhead.clear();
  }
}
