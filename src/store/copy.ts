/**
 * Copies a whole deployment from one database into an empty one, of either dialect (`wsops
 * copy`). Rows are copied as stored: key hashes, sealed endpoint secrets, the queue as it is, the
 * audit trail with its sequence numbers. The source is read in one snapshot (a read transaction)
 * page by page on a key of each table, so no table is ever held whole in memory and the counts
 * verified at the end are the counts of that snapshot.
 */
import { type Kysely, sql } from '#kysely';
import { AppError } from '../errors.js';
import type { Database } from './database.js';
import { migrate } from './migrate.js';
import type { DB } from './schema.js';

export interface CopiedTable {
  table: keyof DB & string;
  /** Columns that order the table and identify a row: the keyset the source is paged on. */
  key: readonly string[];
  /**
   * The target's triggers already filled this table while earlier tables were copied; the
   * source's rows replace theirs.
   */
  replacesTriggerRows?: true;
}

/**
 * What the schema cannot say about a table. Every other table is copied on its primary key,
 * after the tables its foreign keys name; a new table needs nothing here.
 */
const DECLARED: Readonly<Record<string, { key?: readonly string[]; replacesTriggerRows?: true; after?: readonly string[] }>> = {
  // The order of the records_order index: a range scan whatever the primary key's shape (ids are
  // unique per workspace, so this key identifies a row under either shape).
  records: { key: ['workspace_id', 'register', 'updated_at', 'id'] },
  record_tombstones: { key: ['workspace_id', 'register', 'deleted_at', 'id'] },
  // Migration 0013's trigger adds every copied attempt to this rollup; the source's rollup is the
  // truth (retention trims it by hour), so it replaces what the trigger built, or the chart
  // would count every attempt twice.
  delivery_attempt_hours: { replacesTriggerRows: true, after: ['delivery_attempts'] },
};

/**
 * The copy's plan for a migrated database: every table of wsops but those `whyNotCopied` names,
 * each with its keyset, parents before children (then by name, so the order is the same on both
 * dialects).
 */
export async function copyPlan(database: Pick<Database, 'db' | 'engine'>): Promise<CopiedTable[]> {
  const names = (await database.db.introspection.getTables())
    .map((t) => t.name)
    .filter((name) => !name.startsWith('sqlite_') && whyNotCopied(name) === undefined)
    .sort();
  const keys = new Map((await database.engine.tableKeys(database.db)).map((k) => [k.table, k]));
  const pending = names.map((name) => {
    const declared = Object.hasOwn(DECLARED, name) ? DECLARED[name] : undefined;
    const key = declared?.key ?? keys.get(name)?.primaryKey ?? [];
    if (key.length === 0) throw new Error(`table ${name} has no primary key: give it one, or declare its copy key in src/store/copy.ts`);
    const parents = [...(keys.get(name)?.parents ?? []), ...(declared?.after ?? [])].filter((p) => p !== name && names.includes(p));
    return { table: name as keyof DB & string, key, parents, replacesTriggerRows: declared?.replacesTriggerRows };
  });
  const plan: CopiedTable[] = [];
  const placed = new Set<string>();
  while (pending.length) {
    const next = pending.findIndex((t) => t.parents.every((p) => placed.has(p)));
    if (next < 0) throw new Error(`tables name each other in a circle: ${pending.map((t) => t.table).join(', ')}`);
    const [t] = pending.splice(next, 1);
    if (!t) break;
    placed.add(t.table);
    plan.push({ table: t.table, key: t.key, ...(t.replacesTriggerRows ? { replacesTriggerRows: t.replacesTriggerRows } : {}) });
  }
  return plan;
}

/** Tables of the migrated schema that are deliberately not copied, and why. */
export function whyNotCopied(table: string): string | undefined {
  if (table === 'auth_version') return "SQLite only: the key caches' change counter; the target's migration starts its own";
  if (table === 'records_fts') return 'SQLite only: the search index, filled by triggers as the records are inserted';
  if (/^records_fts_(data|idx|docsize|config|content)$/.test(table)) return "SQLite only: FTS5's storage of that index";
  if (table === 'record_refs')
    return 'the index of references: filled by triggers from records.refs as the records are inserted (migration 0027)';
  if (table === 'scim_people_fields')
    return "the people fields SCIM filters compare: filled by triggers from the people's records as they are inserted (migration 0043)";
  if (table === 'records_fts_deferred') return "SQLite only: empty outside an import batch's own transaction (migration 0024)";
  return undefined;
}

export const DEFAULT_BATCH_ROWS = 1000;

export type CopyProgress = (table: string, done: number, total: number) => void;

export interface CopyResult {
  /** Rows per table, in copy order: equal in source and target (verified). */
  tables: { table: string; rows: number }[];
  totalRows: number;
  /** The master secret generated for a demo and kept in the settings table (copied with them), if any. */
  storedServerSecret: string | undefined;
}

/** Rows were written but the target does not hold what the source held: it must be emptied before another try. */
export class CopyIncompleteError extends Error {}

const START_AGAIN = 'Empty the target (drop and create it) and copy again with the server stopped.';

type Row = Record<string, unknown>;
type Conn = Kysely<DB>;

/**
 * Copies everything from `source` into `target`, which must be empty (no rows in any wsops
 * table, no tables that are not wsops's). Both are migrated first.
 */
export async function copyDeployment(
  source: Database,
  target: Database,
  options: { batchRows?: number; progress?: CopyProgress } = {},
): Promise<CopyResult> {
  const batchRows = options.batchRows ?? DEFAULT_BATCH_ROWS;
  // Checked before the source is touched, against the tables of wsops the source has so far.
  await refuseUnlessEmpty(target.db, await copyPlan(source));
  await migrate(source);
  // A source without a workspace is almost surely the wrong WSOPS_DATABASE_URL (an absent SQLite
  // path opens as a new, empty database): copying it would only fill the target with nothing.
  if (!(await source.db.selectFrom('workspaces').select('id').limit(1).executeTakeFirst())) {
    throw new AppError(
      'not_found',
      'the configured database (WSOPS_DATABASE_URL) holds no workspace: nothing to copy; check WSOPS_DATABASE_URL',
    );
  }
  await migrate(target);
  const plan = await copyPlan(source);
  await refuseUnlessEmpty(target.db, plan);
  return readSnapshot(source, async (snapshot) => {
    const counts = new Map<string, number>();
    for (const t of plan) counts.set(t.table, await countRows(snapshot, t.table));
    for (const t of plan) {
      try {
        if (t.replacesTriggerRows) await sql`DELETE FROM ${sql.table(t.table)}`.execute(target.db);
        await copyTable(snapshot, target, t, counts.get(t.table) ?? 0, batchRows, options.progress);
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        throw new CopyIncompleteError(`the copy stopped in ${t.table}: ${reason}. The target holds part of the copy. ${START_AGAIN}`);
      }
    }
    await target.engine.afterExplicitIds(target.db, new Set(plan.map((t) => t.table)));
    const mismatches: string[] = [];
    for (const t of plan) {
      const expected = counts.get(t.table) ?? 0;
      const copied = await countRows(target.db, t.table);
      if (copied !== expected) mismatches.push(`${t.table} has ${copied} rows in the target and ${expected} in the source`);
    }
    if (mismatches.length) {
      throw new CopyIncompleteError(`the copy is incomplete: ${mismatches.join('; ')}. ${START_AGAIN}`);
    }
    const secret = await snapshot.selectFrom('settings').select('value').where('name', '=', 'server_secret').executeTakeFirst();
    const tables = plan.map((t) => ({ table: t.table, rows: counts.get(t.table) ?? 0 }));
    return { tables, totalRows: tables.reduce((sum, t) => sum + t.rows, 0), storedServerSecret: secret?.value };
  });
}

/** Runs `fn` on one connection inside a read transaction: one consistent snapshot of the source (Engine.beginSnapshot). */
async function readSnapshot<T>(source: Database, fn: (snapshot: Conn) => Promise<T>): Promise<T> {
  return source.db.connection().execute(async (conn) => {
    await source.engine.beginSnapshot(conn);
    try {
      const result = await fn(conn);
      await sql`COMMIT`.execute(conn);
      return result;
    } catch (err) {
      await sql`ROLLBACK`.execute(conn).catch(() => {});
      throw err;
    }
  });
}

async function countRows(db: Conn, table: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Keyset pages of the source, each written to the target in one transaction. The next page is
 * read while the current one is written (the two databases work at once); at most two pages
 * are in memory.
 */
async function copyTable(source: Conn, target: Database, t: CopiedTable, total: number, batchRows: number, progress?: CopyProgress) {
  const keyCols = sql.join(t.key.map((c) => sql.ref(c)));
  const read = async (last: Row | undefined): Promise<Row[]> => {
    const after = last ? sql`WHERE (${keyCols}) > (${sql.join(t.key.map((c) => last[c]))})` : sql``;
    return (await sql<Row>`SELECT * FROM ${sql.table(t.table)} ${after} ORDER BY ${keyCols} LIMIT ${batchRows}`.execute(source)).rows;
  };
  // One page of rows in one transaction, as they came from the source (Engine.rowWriter).
  const write = await target.engine.rowWriter(t.table);
  let done = 0;
  progress?.(t.table, 0, total);
  let next = read(undefined);
  let written: Promise<void> = Promise.resolve();
  for (;;) {
    const rows = await next;
    await written;
    if (rows.length === 0) break;
    next = rows.length < batchRows ? Promise.resolve([]) : read(rows[rows.length - 1]);
    // Handled here so a failed read does not go unhandled while the write runs; awaited above.
    next.catch(() => {});
    written = write(rows).then(() => {
      done += rows.length;
      progress?.(t.table, done, total);
    });
    written.catch(() => {});
  }
}

/**
 * An empty target: no wsops table holds a row, and no table is not wsops's (copying into another
 * application's database, or a database of a newer wsops, is refused rather than mixed in).
 */
async function refuseUnlessEmpty(db: Conn, plan: readonly CopiedTable[]): Promise<void> {
  const copied = new Set<string>(plan.map((t) => t.table));
  const tables = await db.introspection.getTables();
  const foreign = tables.map((t) => t.name).filter((name) => !copied.has(name) && whyNotCopied(name) === undefined);
  if (foreign.length) {
    throw new AppError(
      'conflict',
      `the target database is not empty: it holds tables wsops does not know (${foreign.slice(0, 5).join(', ')}); copy into a new, empty database`,
    );
  }
  const filled: string[] = [];
  for (const t of tables) {
    if (!copied.has(t.name)) continue;
    const rows = await countRows(db, t.name);
    if (rows > 0) filled.push(`${t.name}: ${rows}`);
  }
  if (filled.length) {
    throw new AppError(
      'conflict',
      `the target database is not empty (${filled.join(', ')} rows); nothing was copied. Copy into a new, empty database`,
    );
  }
}
