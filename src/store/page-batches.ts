/**
 * Pages that wait for PostgreSQL together go to it as one statement (ADR 19). Under load the
 * cost of a page on PostgreSQL is mostly per statement, not per row: a round trip wakes a
 * backend (about 100 µs of the sender's CPU on this VM) and the executor starts and ends once
 * per statement. So at most `maxInFlight` statements run at a time (page-queries.ts: 1); pages
 * that arrive meanwhile wait, and when one ends, the oldest waiting page leaves with every other
 * waiting page of the same statement text and LIMIT, as one statement:
 *
 *   SELECT p.id, p.updated_at, p.doc, b.n
 *   FROM unnest($1::text[], $2::text[], ...) WITH ORDINALITY AS b(c1, c2, ..., n)
 *   CROSS JOIN LATERAL (<the page's own query, its values read from b>) p
 *
 * Each page is still its own ordered, LIMITed index scan, and gets exactly the rows its own
 * statement would have returned, in its order (read in the statement's snapshot). The lateral
 * subquery refers to `b`, so PostgreSQL can only run it as the inner side of a nested loop, once
 * per row of `b`, and a nested loop emits the inner rows in the order the inner side produces
 * them; test/api/page-batches checks the rows against pages read one by one. A page that waits
 * for nothing (a slot is free) runs its own statement, so a single client's walk is unchanged.
 * Both statements come from the page's own conditions (page-queries.ts), never from parsing SQL.
 */
import type { HotQueries } from './hot-queries.js';

/**
 * A page's rows: id, updated_at, doc, then the statement's snapshot when asked for; a batch's
 * rows also carry their page's number last.
 */
type PageRow = [string, string, string, ...string[]];

/** A page without a text search, as page-queries.ts writes it. */
export interface BatchablePage {
  /** The page alone: a `?` for each of `values`, then one for the LIMIT. Pages join a batch only with pages of the same text and LIMIT. */
  text: string;
  values: readonly string[];
  /** Rows asked for (the page's size + 1). */
  limit: number;
  /**
   * The statement reading pages of this text together: one `text[]` per value (the pages'
   * values, from `unnest`), then the LIMIT. Written once per text.
   */
  batchText(): string;
}

interface Waiting {
  page: BatchablePage;
  resolve(rows: PageRow[]): void;
  reject(err: unknown): void;
}

/**
 * At most this many rows in one statement (pages of 100: 32 of them), so that a batch of pages
 * of 1,000 stays a few MB; the first page waiting always goes.
 */
const MAX_ROWS_PER_STATEMENT = 3_300;

/**
 * A statement still running after this long no longer counts against `maxInFlight`: pages
 * behind an expensive one (two filters that match rarely together) go on to other sessions of
 * the pool, as they would without batching. Under saturating load a batch of 10–13 pages of 100
 * takes 5–10 ms here, CPU shared with everything else; at 10 ms this released ordinary batches
 * too, and (a) served fewer pages (ADR 19).
 */
const SLOW_STATEMENT_MS = 50;

export class PageBatches {
  private inFlight = 0;
  private readonly waiting: Waiting[] = [];
  /** The batched statement of each page text met so far. */
  private readonly statements = new Map<string, string>();

  constructor(
    private readonly hot: Pick<HotQueries, 'rows'>,
    /** Statements at once; below the session pool's size, so pages wait here, where they can join. */
    private readonly maxInFlight: number,
  ) {}

  /** The rows of one page, read alone or together with the pages waiting beside it. */
  rows(page: BatchablePage): Promise<PageRow[]> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ page, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const head = this.waiting.shift() as Waiting;
      const { text, limit } = head.page;
      const batch = [head];
      // The others waiting for the same statement text and LIMIT, in arrival order.
      let rows = limit;
      for (let i = 0; i < this.waiting.length && rows + limit <= MAX_ROWS_PER_STATEMENT; ) {
        const w = this.waiting[i] as Waiting;
        if (w.page.text === text && w.page.limit === limit) {
          batch.push(w);
          rows += limit;
          this.waiting.splice(i, 1);
        } else i++;
      }
      this.inFlight++;
      let counted = true;
      const release = () => {
        if (!counted) return;
        counted = false;
        this.inFlight--;
        this.next();
      };
      // Not unref'd: a statement in flight is work the process is doing.
      const slow = setTimeout(release, SLOW_STATEMENT_MS);
      this.run(batch).finally(() => {
        clearTimeout(slow);
        release();
      });
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    try {
      const head = (batch[0] as Waiting).page;
      if (batch.length === 1) {
        (batch[0] as Waiting).resolve((await this.hot.rows(head.text, [...head.values, head.limit])) as PageRow[]);
        return;
      }
      let text = this.statements.get(head.text);
      if (text === undefined) {
        text = head.batchText();
        this.statements.set(head.text, text);
      }
      // One array per value of the page statement, one element per page.
      const arrays = head.values.map((_, c) => batch.map((w) => w.page.values[c] as string));
      // Each row is the page's own row with the page's number after it, where the page's reader
      // does not look (page-queries.ts reads the first three columns, and the snapshot when it asked).
      const rows = (await this.hot.rows(text, [...arrays, head.limit])) as PageRow[];
      const pages: PageRow[][] = batch.map(() => []);
      for (const r of rows) (pages[Number(r[r.length - 1]) - 1] as PageRow[]).push(r);
      for (let i = 0; i < batch.length; i++) (batch[i] as Waiting).resolve(pages[i] as PageRow[]);
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
