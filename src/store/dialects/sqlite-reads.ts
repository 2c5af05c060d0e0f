/**
 * SQLite's reads of committed data (engine.ts): the read-only connection, the hot queries on it,
 * the list pages, and the two stamps read on it, the data version (read-ahead) and the auth
 * version (the key cache). The writer connection and everything else is in sqlite.ts.
 */
import SQLite from 'better-sqlite3';
import { type ListQuery, type PageRows, pageOfRows, pageWhere } from '../page-queries.js';
import { fts5Query } from '../search-text.js';
import type { AuthChanges, HotQueries, HotValue, Pages } from './engine.js';

/** A read-only connection to a SQLite file. */
export function openSqliteReader(path: string, mmapMb: number): SQLite.Database {
  const reader = new SQLite(path, { readonly: true });
  reader.exec('PRAGMA busy_timeout = 10000');
  reader.exec('PRAGMA cache_size = -32768');
  // Pages read through a mapping skip a read call and a copy each: a page of 100 records
  // touches dozens of pages at random depths (ADR 15). Only read connections map:
  // writes go through the writer's ordinary I/O.
  if (mmapMb) reader.exec(`PRAGMA mmap_size = ${Math.floor(mmapMb) * 1024 * 1024}`);
  return reader;
}

/** The hot queries (engine.ts) on `connection`: one statement per SQL text, rows as arrays. */
export function sqliteHotQueries(connection: SQLite.Database): HotQueries {
  const statements = new Map<string, SQLite.Statement>();
  return {
    async rows(sqlText: string, params: readonly HotValue[]): Promise<unknown[][]> {
      let stmt = statements.get(sqlText);
      if (!stmt) {
        stmt = connection.prepare(sqlText).raw(true);
        statements.set(sqlText, stmt);
      }
      return stmt.all(...params) as unknown[][];
    },
  };
}

/**
 * The placeholder of a LIMIT. SQLite (3.53, as better-sqlite3 builds it) lets the planner use
 * the value bound to a bare `LIMIT ?`, so binding it expires the statement and every run
 * re-parses and re-plans it: a third of a page query's time (perf probes counted one parse per
 * step). `+?` is an expression the planner does not look into; the value is the same.
 */
export const LIMIT = '+?';

const EMPTY = Buffer.alloc(0);

/**
 * List pages on SQLite, read through `hot`. Without a reader of its own (an in-memory database,
 * whose writer connection is the only one) there is no data version to trust, so nothing is
 * read ahead.
 */
export function sqlitePages(hot: HotQueries, reader: SQLite.Database | undefined): Pages {
  const version = reader?.prepare('PRAGMA data_version').pluck();
  return {
    // `PRAGMA data_version` on the read connection (which never writes) moves with every commit
    // of any connection, this process's or another's.
    currency: version && { kind: 'data-version', read: () => version.get() as number },
    listPage: (q) => (q.searchWords.length > 0 ? searchPage(hot, q) : joinedPage(hot, q)),
    close: async () => {},
  };
}

/**
 * A page without a text search, as one statement (so one snapshot): the documents joined by the
 * database into one BLOB, plus the keys of rows `limit` and `limit + 1` read from the ordering
 * index alone (the page's last record, and whether more exist). That spares a JavaScript string
 * per row and the UTF-8 decode and re-encode of the page (ADR 15). The aggregate reads its
 * LIMITed subquery in order: a subquery with a LIMIT cannot be flattened into an aggregate, so
 * SQLite runs it as an ordered co-routine; test/api/page-bytes pins the order.
 */
async function joinedPage(hot: HotQueries, q: ListQuery): Promise<PageRows> {
  const { where, params } = pageWhere(q);
  const text = `SELECT CAST(group_concat(doc, ',') AS BLOB), count(*), NULL, NULL FROM (SELECT doc FROM records WHERE ${where} ORDER BY updated_at, id LIMIT ${LIMIT}) p
      UNION ALL SELECT NULL, NULL, updated_at, id FROM (SELECT updated_at, id FROM records WHERE ${where} ORDER BY updated_at, id LIMIT 2 OFFSET ?) k`;
  const rows = (await hot.rows(text, [...params, q.limit, ...params, q.limit - 1])) as [
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

/** A page with a text search, as rows (the FTS match would otherwise run in both branches of the joined statement). */
async function searchPage(hot: HotQueries, q: ListQuery): Promise<PageRows> {
  const { where, params } = pageWhere(q);
  const text = `SELECT id, updated_at, doc FROM records WHERE ${where} AND rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?) ORDER BY updated_at, id LIMIT ${LIMIT}`;
  const rows = await hot.rows(text, [...params, fts5Query(q.searchWords), q.limit + 1]);
  return pageOfRows(rows as [string, string, string][], q.limit, false);
}

/**
 * The key cache's trust on SQLite: the one-row `auth_version` stamp, moved by triggers in every
 * writing transaction (migration 0014), read with one prepared statement on the read connection
 * (a new read sees every committed write of every process). True when the stamp could be read;
 * empties the cache first whenever it moved.
 *
 * One read serves every request that asked since the last one. A read transaction takes and
 * releases WAL locks with system calls, as much work as the rest of `/api/v1/scopes` (ADR 14,
 * ADR 17). The read runs in the event loop's check phase (setImmediate), after
 * the poll phase has parsed every request that arrived together and each has asked: every
 * request sharing the read was received before it, so it sees every commit made before the
 * request was sent. A request that asks after the read waits for the next one.
 */
export function versionStamp(connection: SQLite.Database, invalidate: (what: string) => void): AuthChanges {
  let stamp: SQLite.Statement | undefined;
  let seen: unknown;
  let barrier: Promise<boolean> | undefined;
  const read = (): boolean => {
    try {
      // Prepared on first use: a process started before migration 0014 was applied bypasses
      // the cache (and tries again on the next request) rather than failing every request.
      stamp ??= connection.prepare('SELECT version FROM auth_version WHERE id = 1').pluck();
      const version = stamp.get();
      if (version !== seen) {
        invalidate('*');
        seen = version;
      }
      return true;
    } catch {
      return false;
    }
  };
  return {
    trusted() {
      barrier ??= new Promise<boolean>((resolve) =>
        setImmediate(() => {
          barrier = undefined;
          resolve(read());
        }),
      );
      return barrier;
    },
  };
}
