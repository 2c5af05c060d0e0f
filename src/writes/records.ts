import type { Kysely } from 'kysely';
import type { Register } from '../registers/define.js';
import { targetsOf } from '../registers/reference-targets.js';
import type { Database, HotQueries } from '../store/database.js';
import type { DB, RecordsTable } from '../store/schema.js';
import { searchText } from '../store/search-text.js';

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
    refs: targetsOf(register, doc),
  };
}

export class RecordStore {
  constructor(
    private readonly database: Database,
    private readonly hot: HotQueries = database.engine.hot,
  ) {}

  private get db(): Kysely<DB> {
    return this.database.db;
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

  /** Writes a whole record (insert or replace) in `db` (a transaction, when given). The caller stamps updated_at. */
  async put(workspaceId: string, register: Register, record: RecordObject, db: Kysely<DB> = this.db): Promise<void> {
    const row = toRow(workspaceId, register, record);
    const { id: _id, workspace_id: _w, register: _r, created_at: _c, ...changes } = row;
    await db
      .insertInto('records')
      .values(row)
      .onConflict((oc) => oc.columns(['workspace_id', 'id']).doUpdateSet(changes))
      .execute();
    // As every record write: a record written again under a deleted id leaves the deletions feed.
    await db.deleteFrom('record_tombstones').where('workspace_id', '=', workspaceId).where('id', '=', row.id).execute();
  }

  /** The seed's bulk insert (the engine's row writer: one statement per row in one transaction on SQLite, one per batch on PostgreSQL). */
  private writeRows: Promise<(rows: Record<string, unknown>[]) => Promise<void>> | undefined;

  /** Bulk insert for the seed, `rows` in one transaction. */
  async insertMany(rows: readonly RecordsTable[]): Promise<void> {
    if (rows.length === 0) return;
    this.writeRows ??= this.database.engine.rowWriter('records');
    await (await this.writeRows)(rows as unknown as Record<string, unknown>[]);
  }
}
