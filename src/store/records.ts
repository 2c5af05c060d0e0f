import type { Kysely } from 'kysely';
import type { Register } from '../registers/define.js';
import type { Database } from './database.js';
import { HotQueries } from './hot-queries.js';
import type { DB, RecordsTable } from './schema.js';
import { fts5Query, PG_SEARCH_VECTOR, searchText, tsQuery } from './search-text.js';

export type RecordObject = Record<string, unknown>;

/**
 * Builds the stored row of a record: its JSON document in the register's field order (only
 * declared fields, so nothing undeclared can ever reach a client) and the indexed columns.
 */
export function toRow(workspaceId: string, register: Register, record: RecordObject): RecordsTable {
  const doc: RecordObject = {};
  for (const name of Object.keys(register.allFields)) {
    const value = record[name];
    doc[name] = value === undefined ? null : value;
  }
  const column = (name: string) => (register.filters.includes(name as never) ? ((doc[name] as string | null) ?? null) : null);
  return {
    id: doc.id as string,
    workspace_id: workspaceId,
    register: register.path,
    created_at: doc.created_at as string,
    updated_at: doc.updated_at as string,
    location_id: column('location_id'),
    status: column('status'),
    category: column('category'),
    record_type: column('record_type'),
    search_text: searchText(register.search.map((s) => doc[s])),
    doc: JSON.stringify(doc),
  };
}

export interface ListQuery {
  workspaceId: string;
  register: Register;
  filters: Partial<Record<string, string>>;
  searchWords: readonly string[];
  updatedSince?: string;
  after?: { updatedAt: string; id: string };
  limit: number;
}

export interface PageRows {
  /**
   * The page's documents joined by commas, in order: the bytes of `data`'s inside. A Buffer
   * when the database hands back bytes (SQLite), so they reach the socket without being
   * decoded into a string and encoded again.
   */
  joined: Buffer | string;
  /** The last record of the page: where the next page starts. */
  last: { updatedAt: string; id: string } | undefined;
  hasMore: boolean;
}

export class RecordStore {
  constructor(
    private readonly database: Database,
    private readonly hot: HotQueries = new HotQueries(database),
  ) {}

  private get db(): Kysely<DB> {
    return this.database.db;
  }

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
    if (q.searchWords.length > 0 || this.database.dialect !== 'sqlite') return this.rowPage(q);
    const { where, params } = this.pageWhere(q);
    const text = `SELECT CAST(group_concat(doc, ',') AS BLOB), count(*), NULL, NULL FROM (SELECT doc FROM records WHERE ${where} ORDER BY updated_at, id LIMIT ${this.hot.limit}) p
      UNION ALL SELECT NULL, NULL, updated_at, id FROM (SELECT updated_at, id FROM records WHERE ${where} ORDER BY updated_at, id LIMIT 2 OFFSET ?) k`;
    const rows = (await this.hot.rows(text, [...params, q.limit, ...params, q.limit - 1])) as [
      Buffer | null,
      number | null,
      string | null,
      string | null,
    ][];
    let body: Buffer | string = '';
    let count = 0;
    const keys: { updatedAt: string; id: string }[] = [];
    for (const r of rows) {
      if (r[1] !== null) {
        body = r[0] ?? '';
        count = r[1];
      } else keys.push({ updatedAt: r[2] as string, id: r[3] as string });
    }
    const hasMore = count === q.limit && keys.length === 2;
    return { joined: body, last: hasMore ? keys[0] : undefined, hasMore };
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
      if (this.database.dialect === 'sqlite') {
        search = ' AND rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?)';
        params.push(fts5Query(q.searchWords));
      } else {
        search = ` AND ${PG_SEARCH_VECTOR} @@ CAST(? AS tsquery)`;
        params.push(tsQuery(q.searchWords));
      }
    }
    params.push(q.limit + 1);
    const rows = (await this.hot.rows(
      `SELECT id, updated_at, doc FROM records WHERE ${where}${search} ORDER BY updated_at, id LIMIT ${this.hot.limit}`,
      params,
    )) as [string, string, string][];
    const hasMore = rows.length > q.limit;
    if (hasMore) rows.pop();
    const lastRow = rows[rows.length - 1];
    return {
      joined: rows.map((r) => r[2]).join(','),
      last: hasMore && lastRow ? { updatedAt: lastRow[1], id: lastRow[0] } : undefined,
      hasMore,
    };
  }

  async getDoc(workspaceId: string, register: Register, id: string): Promise<string | undefined> {
    const rows = await this.hot.rows('SELECT doc FROM records WHERE id = ? AND workspace_id = ? AND register = ?', [
      id,
      workspaceId,
      register.path,
    ]);
    return rows[0]?.[0] as string | undefined;
  }

  async get(workspaceId: string, register: Register, id: string, db: Kysely<DB> = this.db): Promise<RecordObject | undefined> {
    const row = await db
      .selectFrom('records')
      .select('doc')
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('register', '=', register.path)
      .executeTakeFirst();
    return row ? (JSON.parse(row.doc) as RecordObject) : undefined;
  }

  /** Writes a whole record (insert or replace). The caller stamps updated_at. */
  async put(workspaceId: string, register: Register, record: RecordObject, db: Kysely<DB> = this.db): Promise<void> {
    const row = toRow(workspaceId, register, record);
    const { id: _id, workspace_id: _w, register: _r, created_at: _c, ...changes } = row;
    await db
      .insertInto('records')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet(changes))
      .execute();
  }

  /** Removes a record: it leaves every list and detail. Returns whether it existed. */
  async delete(workspaceId: string, register: Register, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('records')
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('register', '=', register.path)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Bulk insert for the seed: fast paths per dialect, in batches. */
  async insertMany(rows: readonly RecordsTable[]): Promise<void> {
    if (rows.length === 0) return;
    const { sqlite, pool } = this.database;
    if (sqlite) {
      const stmt = sqlite.prepare(
        'INSERT INTO records (id, workspace_id, register, created_at, updated_at, location_id, status, category, record_type, search_text, doc) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
      );
      sqlite.transaction(() => {
        for (const r of rows) {
          stmt.run(
            r.id,
            r.workspace_id,
            r.register,
            r.created_at,
            r.updated_at,
            r.location_id,
            r.status,
            r.category,
            r.record_type,
            r.search_text,
            r.doc,
          );
        }
      })();
      return;
    }
    if (pool) {
      // unnest() of eleven text arrays: one round trip per batch, no parameter-count limit.
      const cols = [
        'id',
        'workspace_id',
        'register',
        'created_at',
        'updated_at',
        'location_id',
        'status',
        'category',
        'record_type',
        'search_text',
        'doc',
      ] as const;
      const arrays = cols.map((c) => rows.map((r) => r[c]));
      await pool.query(
        `INSERT INTO records (${cols.join(',')}) SELECT * FROM unnest(${cols.map((_, i) => `$${i + 1}::text[]`).join(',')})`,
        arrays,
      );
    }
  }
}
