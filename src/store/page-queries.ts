/**
 * The list page query: one page of a register in (updated_at, id) order, with its filters,
 * text search, `updated_since` and cursor position, read by the API process over its read
 * connection (SQLite) or its page sessions (PostgreSQL, page-sessions.ts).
 */
import type { Register } from '../registers/define.js';
import type { Dialect } from './database.js';
import type { HotQueries } from './hot-queries.js';
import { type BatchablePage, PageBatches } from './page-batches.js';
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

/** One condition of a page's WHERE: its values, and its SQL given how each value is referred to. */
interface Condition {
  values: string[];
  sql(refs: readonly string[]): string;
}

/** The conditions joined by AND, each value referred to as `ref()` gives, in order. */
const whereOf = (conditions: readonly Condition[], ref: () => string): string =>
  conditions.map((c) => c.sql(c.values.map(ref))).join(' AND ');

/**
 * PostgreSQL: page statements running at once per PageQueries; pages arriving meanwhile wait
 * and go together (page-batches.ts). With 1, under saturating load, batches held 10–13 pages of
 * 100 against 5–6 with 2, and the server's and PostgreSQL's CPU per page were lower (ADR 19).
 * The pool's other sessions serve statements that run long (page-batches.ts).
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

  /**
   * The conditions of a page's WHERE (without the search), each with its values. Built as
   * structure, not text, so that the same page is written two ways from it: with `?` for each
   * value (the page alone), and with each value read from a batch's row (page-batches.ts).
   */
  private conditions(q: ListQuery): Condition[] {
    // Column names come from the register's declared filters only, never from the request.
    const conditions: Condition[] = [
      { values: [q.workspaceId], sql: ([w]) => `workspace_id = ${w}` },
      { values: [q.register.path], sql: ([r]) => `register = ${r}` },
    ];
    for (const name of q.register.filters) {
      const value = q.filters[name];
      if (value !== undefined) conditions.push({ values: [value], sql: ([v]) => `${name} = ${v}` });
    }
    // Past the first page the cursor's position implies the watermark (a cursor is bound to its
    // updated_since, and its record was after it). Leaving the watermark out lets SQLite seek the
    // index to the position; with both, it ranged from the watermark and filtered every row up
    // to the position, so each later page of an updated_since walk cost more than the one before.
    if (q.updatedSince !== undefined && !q.after) conditions.push({ values: [q.updatedSince], sql: ([s]) => `updated_at > ${s}` });
    if (q.after) conditions.push({ values: [q.after.updatedAt, q.after.id], sql: ([u, i]) => `(updated_at, id) > (${u}, ${i})` });
    return conditions;
  }

  /** The WHERE clause of a page (without the search) with `?` for each value, and the values. */
  private pageWhere(q: ListQuery): { where: string; params: (string | number)[] } {
    const conditions = this.conditions(q);
    return { where: whereOf(conditions, () => '?'), params: conditions.flatMap((c) => c.values) };
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
    // An uncorrelated subquery runs once per statement (an InitPlan), in the statement's snapshot.
    const snapshot = q.withSnapshot && this.dialect === 'postgres' ? ', (SELECT pg_current_snapshot()::text)' : '';
    const rows = (
      q.searchWords.length > 0 || !this.batches ? await this.searchPage(q, snapshot) : await this.batches.rows(this.batchable(q, snapshot))
    ) as [string, string, string, string?][];
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

  /** A page with a text search, by its own statement (never batched: its best plan depends on its words, ADR 18). */
  private searchPage(q: ListQuery, snapshot: string): Promise<unknown[][]> {
    const { where, params } = this.pageWhere(q);
    let search: string;
    if (this.dialect === 'sqlite') {
      search = 'rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?)';
      params.push(fts5Query(q.searchWords));
    } else {
      search = `${PG_SEARCH_VECTOR} @@ CAST(? AS tsquery)`;
      params.push(tsQuery(q.searchWords));
    }
    params.push(q.limit + 1);
    const text = `SELECT id, updated_at, doc${snapshot} FROM records WHERE ${where} AND ${search} ORDER BY updated_at, id LIMIT ${this.hot.limit}`;
    return this.searchHot.rows(text, params);
  }

  /** A page without a text search on PostgreSQL, as page-batches.ts takes it: alone, and as part of a batch. */
  private batchable(q: ListQuery, snapshot: string): BatchablePage {
    const conditions = this.conditions(q);
    return {
      text: `SELECT id, updated_at, doc${snapshot} FROM records WHERE ${whereOf(conditions, () => '?')} ORDER BY updated_at, id LIMIT ?`,
      values: conditions.flatMap((c) => c.values),
      limit: q.limit + 1,
      batchText() {
        // The page's own WHERE, its values read from the batch's row: `workspace_id = b.c1 AND ...`.
        let columns = 0;
        const lateralWhere = whereOf(conditions, () => `b.c${++columns}`);
        const names = Array.from({ length: columns }, (_, i) => `c${i + 1}`).join(', ');
        const arrays = Array.from({ length: columns }, () => 'CAST(? AS text[])').join(', ');
        return `SELECT p.id, p.updated_at, p.doc${snapshot}, b.n FROM unnest(${arrays}) WITH ORDINALITY AS b(${names}, n) CROSS JOIN LATERAL (SELECT id, updated_at, doc FROM records WHERE ${lateralWhere} ORDER BY updated_at, id LIMIT ?) p`;
      },
    };
  }
}
