/**
 * The list page query: one page of a register in (updated_at, id) order, with its filters,
 * text search, `updated_since` and cursor position. Used by the API process and by the page
 * threads (page-thread.ts), each over its own read connection.
 */
import type { Register } from '../registers/define.js';
import type { Dialect } from './database.js';
import type { HotQueries } from './hot-queries.js';
import { PageBatches } from './page-batches.js';
import { fts5Query, PG_SEARCH_VECTOR, tsQuery } from './search-text.js';

export interface ListQuery {
  workspaceId: string;
  register: Register;
  filters: Partial<Record<string, string>>;
  searchWords: readonly string[];
  updatedSince?: string;
  after?: { updatedAt: string; id: string };
  limit: number;
  /**
   * PostgreSQL: also return the snapshot the page was read in (`pg_current_snapshot()` of its
   * own statement), which tells a page read ahead is still current (read-ahead.ts).
   */
  withSnapshot?: boolean;
}

export interface PageRows {
  /**
   * The page's documents, in order: a Buffer of them joined by commas (the bytes of `data`'s
   * inside) when the database hands back bytes (SQLite), so they reach the socket without being
   * decoded into a string and encoded again; else the documents as strings, which the page's
   * body is written from (page-body.ts), never joined into one string.
   */
  documents: Buffer | readonly string[];
  /** The last record of the page: where the next page starts. */
  last: { updatedAt: string; id: string } | undefined;
  hasMore: boolean;
  /** The snapshot the page was read in, when asked for and the page has a row (PostgreSQL). */
  snapshot?: string;
}

const EMPTY = Buffer.alloc(0);

/**
 * PostgreSQL: page statements running at once per PageQueries (a page thread, or the event
 * loop); pages arriving meanwhile wait and go together (page-batches.ts). With 1, under
 * saturating load, batches held 10–13 pages of 100 against 5–6 with 2, and the server's and
 * PostgreSQL's CPU per page were lower (ADR 19). A thread's other sessions serve statements
 * that run long (page-batches.ts) and pages with a text search.
 */
const PAGE_STATEMENTS_AT_ONCE = 1;

export class PageQueries {
  constructor(
    private readonly dialect: Dialect,
    /** Where pages without a text search run. */
    readonly hot: HotQueries,
    /** Where pages with a text search run, when not on `hot` (PostgreSQL, ADR 18). */
    readonly searchHot: HotQueries = hot,
  ) {
    this.batches = dialect === 'postgres' ? new PageBatches(hot, PAGE_STATEMENTS_AT_ONCE) : undefined;
  }

  /** PostgreSQL: pages without a text search that wait together run as one statement (page-batches.ts). */
  private readonly batches: PageBatches | undefined;

  /** The WHERE clause of a page (without the search) and its parameters. */
  private pageWhere(q: ListQuery): { where: string; params: (string | number)[] } {
    // Column names come from the register's declared filters only, never from the request.
    let where = 'workspace_id = ? AND register = ?';
    const params: (string | number)[] = [q.workspaceId, q.register.path];
    for (const name of q.register.filters) {
      const value = q.filters[name];
      if (value === undefined) continue;
      where += ` AND ${name} = ?`;
      params.push(value);
    }
    // Past the first page the cursor's position implies the watermark (a cursor is bound to its
    // updated_since, and its record was after it). Leaving the watermark out lets SQLite seek the
    // index to the position; with both, it ranged from the watermark and filtered every row up
    // to the position, so each later page of an updated_since walk cost more than the one before.
    if (q.updatedSince !== undefined && !q.after) {
      where += ' AND updated_at > ?';
      params.push(q.updatedSince);
    }
    if (q.after) {
      where += ' AND (updated_at, id) > (?, ?)';
      params.push(q.after.updatedAt, q.after.id);
    }
    return { where, params };
  }

  /**
   * One page in (updated_at, id) order. On SQLite without a search it is one statement (so one
   * snapshot): the documents joined by the database into one BLOB, plus the keys of rows
   * `limit` and `limit + 1` read from the ordering index alone (the page's last record, and
   * whether more exist). That spares a JavaScript string per row and the UTF-8 decode and
   * re-encode of the page (ADR 15). The aggregate reads its LIMITed subquery in order: a
   * subquery with a LIMIT cannot be flattened into an aggregate, so SQLite runs it as an
   * ordered co-routine; test/api/page-bytes pins the order.
   *
   * PostgreSQL reads rows: its `string_agg` cost about 4 µs per document (4 ms for a page of
   * 1,000, against 1 ms for the rows), and one 581 KB message parsed slower in `pg` than 1,001
   * small ones.
   */
  async listPage(q: ListQuery): Promise<PageRows> {
    if (q.searchWords.length > 0 || this.dialect !== 'sqlite') return this.rowPage(q);
    const { where, params } = this.pageWhere(q);
    const text = `SELECT CAST(group_concat(doc, ',') AS BLOB), count(*), NULL, NULL FROM (SELECT doc FROM records WHERE ${where} ORDER BY updated_at, id LIMIT ${this.hot.limit}) p
      UNION ALL SELECT NULL, NULL, updated_at, id FROM (SELECT updated_at, id FROM records WHERE ${where} ORDER BY updated_at, id LIMIT 2 OFFSET ?) k`;
    const rows = (await this.hot.rows(text, [...params, q.limit, ...params, q.limit - 1])) as [
      Buffer | null,
      number | null,
      string | null,
      string | null,
    ][];
    let body: Buffer = EMPTY;
    let count = 0;
    const keys: { updatedAt: string; id: string }[] = [];
    for (const r of rows) {
      if (r[1] !== null) {
        body = r[0] ?? EMPTY;
        count = r[1];
      } else keys.push({ updatedAt: r[2] as string, id: r[3] as string });
    }
    const hasMore = count === q.limit && keys.length === 2;
    return { documents: body, last: hasMore ? keys[0] : undefined, hasMore };
  }

  /**
   * A page as rows of (id, updated_at, doc), limit + 1 of them to know whether more exist: on
   * PostgreSQL, and on SQLite with a text search (the FTS match would otherwise run in both
   * branches of the joined statement).
   */
  private async rowPage(q: ListQuery): Promise<PageRows> {
    const { where, params } = this.pageWhere(q);
    let search = '';
    if (q.searchWords.length > 0) {
      if (this.dialect === 'sqlite') {
        search = ' AND rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?)';
        params.push(fts5Query(q.searchWords));
      } else {
        search = ` AND ${PG_SEARCH_VECTOR} @@ CAST(? AS tsquery)`;
        params.push(tsQuery(q.searchWords));
      }
    }
    params.push(q.limit + 1);
    // An uncorrelated subquery runs once per statement (an InitPlan), in the statement's snapshot.
    const snapshot = q.withSnapshot && this.dialect === 'postgres' ? ', (SELECT pg_current_snapshot()::text)' : '';
    const hot = q.searchWords.length > 0 ? this.searchHot : this.hot;
    const text = `SELECT id, updated_at, doc${snapshot} FROM records WHERE ${where}${search} ORDER BY updated_at, id LIMIT ${this.hot.limit}`;
    const rows = (this.batches && !search ? await this.batches.rows(text, params) : await hot.rows(text, params)) as [
      string,
      string,
      string,
      string?,
    ][];
    const hasMore = rows.length > q.limit;
    if (hasMore) rows.pop();
    const lastRow = rows[rows.length - 1];
    return {
      documents: rows.map((r) => r[2]),
      last: hasMore && lastRow ? { updatedAt: lastRow[1], id: lastRow[0] } : undefined,
      hasMore,
      ...(snapshot && rows[0]?.[3] ? { snapshot: rows[0][3] } : {}),
    };
  }
}
