import type { Kysely } from '#kysely';
import type { Register } from '../registers/define.js';
import { targetsJson, targetsOf } from '../registers/reference-targets.js';
import type { Database, HotQueries } from '../store/database.js';
import type { DB, RecordsTable } from '../store/schema.js';
import { searchText } from '../store/search-text.js';

export type RecordObject = Record<string, unknown>;

/** The stamps a row is stored with, when they are not the record's own (see toRow). */
export interface Stamps {
  created_at: string;
  updated_at: string;
}

/**
 * A stored row without its stamps: what a write can build before it knows what is stored (an
 * import builds it while the previous batch is being written). `body` is the JSON document up to
 * its stamps, which every register declares last (defineRegister).
 */
export interface RowParts {
  id: string;
  register: string;
  body: string;
  location_id: string | null;
  status: string | null;
  category: string | null;
  record_type: string | null;
  search_text: string;
  refs: string;
}

/** A register's declared fields in order (stamps left out), and its filter columns: looked up once per register. */
interface RowShape {
  names: readonly string[];
  filters: ReadonlySet<string>;
}
const shapes = new WeakMap<Register, RowShape>();
function shapeOf(register: Register): RowShape {
  let shape = shapes.get(register);
  if (!shape) {
    const names = Object.keys(register.allFields);
    if (names.slice(-2).join() !== 'created_at,updated_at') throw new Error(`${register.path}: the stamps must be the last fields`);
    shape = { names: names.slice(0, -2), filters: new Set<string>(register.filters) };
    shapes.set(register, shape);
  }
  return shape;
}

/**
 * The row of a record but its stamps: only declared fields, in the register's order (so nothing
 * undeclared can ever reach a client), and the indexed columns. `targets`: the ids the record
 * names, when the caller has them already (referencesIn), else read from the record.
 */
export function rowParts(register: Register, record: RecordObject, targets?: readonly { id: string }[]): RowParts {
  const { names, filters } = shapeOf(register);
  const doc: RecordObject = {};
  for (const name of names) {
    const value = record[name];
    doc[name] = value === undefined ? null : value;
  }
  const column = (name: string) => (filters.has(name) ? ((doc[name] as string | null) ?? null) : null);
  const json = JSON.stringify(doc);
  return {
    id: doc.id as string,
    register: register.path,
    body: json.slice(0, -1),
    location_id: column('location_id'),
    status: column('status'),
    category: column('category'),
    record_type: column('record_type'),
    search_text: searchText(register.search.map((s) => doc[s])),
    refs: targets ? targetsJson(targets, doc.id as string) : targetsOf(register, doc),
  };
}

const stampJson = (stamp: string | null | undefined) => JSON.stringify(stamp ?? null);

/** The stored row of `parts` with its stamps. */
export function rowOf(workspaceId: string, parts: RowParts, stamps: Partial<Stamps>): RecordsTable {
  return {
    id: parts.id,
    workspace_id: workspaceId,
    register: parts.register,
    created_at: (stamps.created_at ?? null) as string,
    updated_at: (stamps.updated_at ?? null) as string,
    location_id: parts.location_id,
    status: parts.status,
    category: parts.category,
    record_type: parts.record_type,
    search_text: parts.search_text,
    doc: `${parts.body},"created_at":${stampJson(stamps.created_at)},"updated_at":${stampJson(stamps.updated_at)}}`,
    refs: parts.refs,
  };
}

/**
 * Builds the stored row of a record: its JSON document in the register's field order and the
 * indexed columns (rowParts), stamped with `stamps` when given, else with the record's own.
 */
export function toRow(workspaceId: string, register: Register, record: RecordObject, stamps?: Stamps): RecordsTable {
  return rowOf(workspaceId, rowParts(register, record), stamps ?? (record as Partial<Stamps>));
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

  /**
   * Writes a whole record (insert or replace) in `db` (a transaction, when given). The caller stamps
   * updated_at. `stored`: the caller read the record in this transaction under a row lock, so it
   * exists and has no tombstone to remove (one statement fewer).
   */
  async put(workspaceId: string, register: Register, record: RecordObject, db: Kysely<DB> = this.db, stored = false): Promise<void> {
    const row = toRow(workspaceId, register, record);
    const { id: _id, workspace_id: _w, register: _r, created_at: _c, ...changes } = row;
    await db
      .insertInto('records')
      .values(row)
      .onConflict((oc) => oc.columns(['workspace_id', 'id']).doUpdateSet(changes))
      .execute();
    if (stored) return;
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
