/**
 * PostgreSQL's reads on every API request (engine.ts): the hot queries as named prepared
 * statements, the sessions that read list pages (ADR 18), pages that wait together read as one
 * statement (ADR 19), and the snapshot that tells a page read ahead is still current (ADR 17).
 * The main pool and everything else is in postgres.ts.
 */
import type pg from 'pg';
import type { Logger } from '../../logger.js';
import { heedLostSessions } from '../lost-sessions.js';
import { type ListQuery, type PageRows, pageConditions, pageOfRows, pageWhere, whereOf } from '../page-queries.js';
import { pgDriver } from '../pg-driver.js';
import { PG_SEARCH_VECTOR, tsQuery } from '../search-text.js';
import type { Currency, HotQueries, HotValue, Pages } from './engine.js';
import { statementName } from './postgres-prepared.js';

/** The hot queries (engine.ts) on `pool`: `?` becomes `$n`, each text a named statement prepared once per session. */
export function postgresHotQueries(pool: pg.Pool): HotQueries {
  const prepared = new Map<string, { name: string; text: string }>();
  return {
    async rows(sqlText: string, params: readonly HotValue[]): Promise<unknown[][]> {
      let statement = prepared.get(sqlText);
      if (!statement) {
        let n = 0;
        statement = {
          name: statementName(sqlText),
          text: sqlText.replace(/\?/g, () => `$${++n}`),
        };
        prepared.set(sqlText, statement);
      }
      const result = await pool.query({ name: statement.name, text: statement.text, values: params as HotValue[], rowMode: 'array' });
      return result.rows as unknown[][];
    },
  };
}

/**
 * PostgreSQL sessions for pages without a text search, per API process (README, "Connections";
 * docs/postgresql-sessions.md). Five keep pages flowing while one waits; more only queue in
 * PostgreSQL.
 */
export const PAGE_SESSIONS = 5;

/**
 * The sessions that read list pages (ADR 18). A page without a text search has one good plan
 * whatever its values (an ordered scan of the ordering index, or of a filter's), but the plan
 * cache costed the generic plan of `LIMIT $n` and `(updated_at, id) > ($a, $b)` so high that it
 * planned every execution again, a cost of the database on every page (ADR 18). Those sessions keep the
 * generic plan. A text search's best plan does depend on its words (an ordered scan for a common
 * one, the GIN index for a rare one), so searches keep a plan per execution: on the main pool
 * (an API process), or on sessions of their own.
 *
 * A pool whose every new session runs `SET plan_cache_mode = <mode>` before anything else, and,
 * with the generic plan, `SET jit = off`: a generic plan's cost is estimated for 10% of the
 * register, so a batch of pages came out above `jit_above_cost` and compiled itself on every
 * execution, far longer than the statement runs (ADR 19).
 */
function poolWithPlanCacheMode(
  url: string,
  max: number,
  mode: 'auto' | 'force_generic_plan',
  applicationName: string,
  logger: Logger | undefined,
): pg.Pool {
  const settings = mode === 'auto' ? undefined : `SET plan_cache_mode = ${mode}; SET jit = off`;
  const pool = new (pgDriver().Pool)({
    connectionString: url,
    max,
    // The name tells an operator what each session in pg_stat_activity is for.
    application_name: applicationName,
    // Kept open however long they idle, where pg closes a session idle for 10 s: a new session
    // starts a backend with cold catalog caches and prepares its statements again, and the burst
    // that follows a lull paid for it in rate and in p99 (ADR 18). They are few (the pages run
    // one statement at a time), and a session
    // the server ends is replaced (heedLostSessions). Idle, they do not keep the process alive.
    idleTimeoutMillis: 0,
    allowExitOnIdle: true,
    // Awaited by the pool before it hands the new session out, so the settings precede its first
    // page query (a query queued behind another on one client is deprecated in pg 8 and goes in
    // pg 9). A SET, not a startup option, which a pooler such as PgBouncer may refuse; should it
    // fail, pages are only slower.
    ...(settings
      ? {
          onConnect: (client: pg.ClientBase) =>
            client.query(settings).then(
              () => {},
              () => {},
            ),
        }
      : {}),
  });
  heedLostSessions(pool, logger);
  return pool;
}

export interface PageSessions {
  /** Pages without a text search: the generic plan. */
  pages: HotQueries;
  /** Pages with a text search: a plan per execution when PostgreSQL judges it better. */
  searches: HotQueries;
  close(): Promise<void>;
}

/**
 * Up to `max` sessions for pages, and as many for searches unless `searches` is given (an API
 * process passes its main pool's queries, whose sessions keep PostgreSQL's usual plan choice).
 * Sessions open on first use, so a process that never reads a page never opens one. Without a
 * logger (the tests) lost sessions are replaced silently.
 */
export function pageSessions(url: string, max: number, searches?: HotQueries, logger?: Logger): PageSessions {
  const generic = poolWithPlanCacheMode(url, max, 'force_generic_plan', 'wsops-pages', logger);
  const auto = searches ? undefined : poolWithPlanCacheMode(url, max, 'auto', 'wsops-searches', logger);
  return {
    pages: postgresHotQueries(generic),
    searches: searches ?? postgresHotQueries(auto as pg.Pool),
    close: async () => {
      await Promise.all([generic.end(), auto?.end()]);
    },
  };
}

/**
 * Page statements running at once per process; pages arriving meanwhile wait and go together
 * (PageBatches). With 1, under saturating load, batches hold about twice the pages they do with
 * 2, and the server's and PostgreSQL's CPU per page are lower (ADR 19). The pool's other
 * sessions serve statements that run long (SLOW_STATEMENT_MS).
 */
const PAGE_STATEMENTS_AT_ONCE = 1;

/** An uncorrelated subquery runs once per statement (an InitPlan), in the statement's snapshot. */
const SNAPSHOT_COLUMN = ', (SELECT pg_current_snapshot()::text)';

/**
 * List pages on PostgreSQL: pages without a text search on the generic-plan sessions, batched
 * when they wait together; searches by their own statement on `sessions.searches`. Rows, not
 * one aggregate: PostgreSQL's `string_agg` costs several times the rows' own time, and one
 * large message parses slower in `pg` than the many small ones (ADR 15).
 */
export class PostgresPages implements Pages {
  private readonly batches: PageBatches;

  constructor(
    readonly sessions: PageSessions,
    readonly currency: Currency | undefined = undefined,
  ) {
    this.batches = new PageBatches(sessions.pages, PAGE_STATEMENTS_AT_ONCE);
  }

  async listPage(q: ListQuery): Promise<PageRows> {
    const snapshot = q.withSnapshot ? SNAPSHOT_COLUMN : '';
    const rows = q.searchWords.length > 0 ? await this.searchPage(q, snapshot) : await this.batches.rows(batchable(q, snapshot));
    return pageOfRows(rows as PageRow[], q.limit, snapshot !== '');
  }

  /** A page with a text search, by its own statement (never batched: its best plan depends on its words, ADR 18). */
  private searchPage(q: ListQuery, snapshot: string): Promise<unknown[][]> {
    const { where, params } = pageWhere(q);
    const text = `SELECT id, updated_at, doc${snapshot} FROM records WHERE ${where} AND ${PG_SEARCH_VECTOR} @@ CAST(? AS tsquery) ORDER BY updated_at, id LIMIT ?`;
    return this.sessions.searches.rows(text, [...params, tsQuery(q.searchWords), q.limit + 1]);
  }

  close(): Promise<void> {
    return this.sessions.close();
  }
}

/** A page without a text search, as PageBatches takes it: alone, and as part of a batch. */
function batchable(q: ListQuery, snapshot: string): BatchablePage {
  const conditions = pageConditions(q);
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

/** PostgreSQL's undefined_function: `pg_current_snapshot()` arrived in PostgreSQL 13. */
const UNDEFINED_FUNCTION = '42883';

/**
 * Read-ahead's currency on PostgreSQL: the page's own statement returns its snapshot, and a page
 * read ahead is used only if the snapshot read (through `hot`) when its request arrives is the
 * same: the same snapshot sees the same rows, and any transaction that wrote since (anywhere in
 * the cluster) changes it. Before PostgreSQL 13 every page read ahead would fail (its statement
 * asks for its snapshot) and be read again: one wasted query per page of every walk. The first
 * such failure turns read-ahead off for the life of the process.
 */
export function snapshotCurrency(hot: HotQueries, logger: Logger): Currency {
  let usable = true;
  return {
    kind: 'snapshot',
    read: async () => {
      try {
        return String((await hot.rows('SELECT pg_current_snapshot()::text', []))[0]?.[0]);
      } catch (err) {
        if (usable && (err as { code?: unknown }).code === UNDEFINED_FUNCTION) {
          usable = false;
          logger.warn('this PostgreSQL has no pg_current_snapshot() (it arrived in PostgreSQL 13): walks are not read ahead');
        }
        throw err;
      }
    },
    usable: () => usable,
  };
}

/**
 * A page's rows: id, updated_at, doc, then the statement's snapshot when asked for; a batch's
 * rows also carry their page's number last.
 */
type PageRow = [string, string, string, ...string[]];

/** A page without a text search, as `batchable` writes it. */
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
 * the pool, as they would without batching. It sits well above what an ordinary batch takes
 * under saturating load: a lower bound released ordinary batches too, and fewer pages were
 * served (ADR 19).
 */
const SLOW_STATEMENT_MS = 50;

/**
 * Pages that wait for PostgreSQL together go to it as one statement (ADR 19). Under load the
 * cost of a page on PostgreSQL is mostly per statement, not per row: a round trip wakes a
 * backend (a cost in the sender's CPU, ADR 19) and the executor starts and ends once
 * per statement. So at most `maxInFlight` statements run at a time (PAGE_STATEMENTS_AT_ONCE);
 * pages that arrive meanwhile wait, and when one ends, the oldest waiting page leaves with every
 * other waiting page of the same statement text and LIMIT, as one statement:
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
 * Both statements come from the page's own conditions (`batchable`), never from parsing SQL.
 */
export class PageBatches {
  private inFlight = 0;
  private readonly waiting: Waiting[] = [];
  /** The batched statement of each page text met so far. */
  private readonly statements = new Map<string, string>();

  constructor(
    private readonly hot: HotQueries,
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
      // does not look (pageOfRows reads the first three columns, and the snapshot when it asked).
      const rows = (await this.hot.rows(text, [...arrays, head.limit])) as PageRow[];
      const pages: PageRow[][] = batch.map(() => []);
      for (const r of rows) (pages[Number(r[r.length - 1]) - 1] as PageRow[]).push(r);
      for (let i = 0; i < batch.length; i++) (batch[i] as Waiting).resolve(pages[i] as PageRow[]);
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
