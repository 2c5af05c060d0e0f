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
    if (q.updatedSince !== undefined) {
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
   * One page in (updated_at, id) order. Without a search it is one statement (so one snapshot):
   * the documents joined by the database itself, plus the keys of rows `limit` and `limit + 1`
   * read from the ordering index alone (the page's last record, and whether more exist). That
   * spares a JavaScript string per row. The aggregate reads its LIMITed subquery in order: a
   * subquery with a LIMIT cannot be flattened into an aggregate, so it runs as an ordered
   * co-routine (SQLite) or an Aggregate over the Limit of the index scan (PostgreSQL). Naming
   * the order in the aggregate instead (`string_agg(doc, ',' ORDER BY ...)`) made PostgreSQL
   * sort the documents again: 4 ms instead of 1.2 ms for a page of 1,000. test/api/page-bytes
   * pins the order on both databases.
   */
  async listPage(q: ListQuery): Promise<PageRows> {
    if (q.searchWords.length > 0) return this.searchPage(q);
    const { where, params } = this.pageWhere(q);
    const sqlite = this.database.dialect === 'sqlite';
    const joined = sqlite ? "CAST(group_concat(doc, ',') AS BLOB)" : "string_agg(doc, ',')";
    const text = `SELECT ${joined}, count(*), NULL, NULL FROM (SELECT doc, updated_at, id FROM records WHERE ${where} ORDER BY updated_at, id LIMIT ?) p
      UNION ALL SELECT NULL, NULL, updated_at, id FROM (SELECT updated_at, id FROM records WHERE ${where} ORDER BY updated_at, id LIMIT 2 OFFSET ?) k`;
    const rows = (await this.hot.rows(text, [...params, q.limit, ...params, q.limit - 1])) as [
      Buffer | string | null,
      number | string | null,
      string | null,
      string | null,
    ][];
    let body: Buffer | string = '';
    let count = 0;
    const keys: { updatedAt: string; id: string }[] = [];
    for (const r of rows) {
      if (r[1] !== null) {
        body = r[0] ?? '';
        count = Number(r[1]);
      } else keys.push({ updatedAt: r[2] as string, id: r[3] as string });
    }
    const hasMore = count === q.limit && keys.length === 2;
    return { joined: body, last: hasMore ? keys[0] : undefined, hasMore };
  }

  /** A page with a text search: rows as before (the search would otherwise run twice). */
  private async searchPage(q: ListQuery): Promise<PageRows> {
    let { where, params } = this.pageWhere(q);
    if (this.database.dialect === 'sqlite') {
      where += ' AND rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?)';
      params.push(fts5Query(q.searchWords));
    } else {
      where += ` AND ${PG_SEARCH_VECTOR} @@ CAST(? AS tsquery)`;
      params.push(tsQuery(q.searchWords));
    }
    params = [...params, q.limit + 1];
    const rows = (await this.hot.rows(
      `SELECT id, updated_at, doc FROM records WHERE ${where} ORDER BY updated_at, id LIMIT ?`,
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
