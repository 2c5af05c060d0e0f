/** The mirror in SQLite (better-sqlite3, an optional peer dependency loaded only when used). */
import type SQLite from 'better-sqlite3';
import { loadDriver } from './driver.js';
import {
  fromColumn,
  type MirrorRecord,
  type MirrorStore,
  quote,
  type RegisterState,
  SEEN_COLUMN,
  STATE_TABLE,
  tableName,
  toColumn,
} from './store.js';

const SQL_TYPES = { text: 'TEXT', integer: 'INTEGER', number: 'REAL', boolean: 'INTEGER', json: 'TEXT' } as const;

export async function openSqliteStore(path: string): Promise<MirrorStore> {
  const Database = await loadDriver<typeof SQLite>('better-sqlite3', 'SQLite');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const upserts = new Map<string, (records: readonly MirrorRecord[], walkId: string) => void>();

  return {
    async prepare(registers) {
      db.exec(`CREATE TABLE IF NOT EXISTS ${STATE_TABLE} (register TEXT PRIMARY KEY, watermark TEXT, last_full_at TEXT)`);
      // A mirror made before the deletions feed gains its position column.
      const stateColumns = (db.prepare(`PRAGMA table_info(${STATE_TABLE})`).all() as { name: string }[]).map((c) => c.name);
      if (!stateColumns.includes('deletions_since')) db.exec(`ALTER TABLE ${STATE_TABLE} ADD COLUMN deletions_since TEXT`);
      for (const register of registers) {
        const table = quote(tableName(register));
        const columns = Object.entries(register.columns).filter(([name]) => name !== 'id');
        db.exec(
          `CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, ${columns.map(([n, k]) => `${quote(n)} ${SQL_TYPES[k]}`).join(', ')}, ${SEEN_COLUMN} TEXT)`,
        );
        const existing = new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
        for (const [n, k] of columns) if (!existing.has(n)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${quote(n)} ${SQL_TYPES[k]}`);
        const names = [...Object.keys(register.columns), SEEN_COLUMN];
        const insert = db.prepare(
          `INSERT INTO ${table} (${names.map(quote).join(', ')}) VALUES (${names.map(() => '?').join(', ')}) ON CONFLICT(id) DO UPDATE SET ${names
            .filter((n) => n !== 'id')
            .map((n) => `${quote(n)} = excluded.${quote(n)}`)
            .join(', ')}`,
        );
        const kinds = Object.entries(register.columns);
        upserts.set(
          register.path,
          db.transaction((records: readonly MirrorRecord[], walkId: string) => {
            for (const record of records) insert.run(...kinds.map(([n, k]) => toColumn(k, record[n], true)), walkId);
          }),
        );
      }
    },
    async upsert(register, records, walkId) {
      upserts.get(register.path)!(records, walkId);
    },
    async removeUnseen(register, walkId) {
      return db.prepare(`DELETE FROM ${quote(tableName(register))} WHERE ${SEEN_COLUMN} IS NOT ?`).run(walkId).changes;
    },
    async applyDeletions(register, tombstones) {
      const remove = db.prepare(`DELETE FROM ${quote(tableName(register))} WHERE id = ? AND (updated_at IS NULL OR updated_at < ?)`);
      return db.transaction(() => {
        let removed = 0;
        for (const t of tombstones) removed += remove.run(t.id, t.deleted_at).changes;
        return removed;
      })();
    },
    async state(register) {
      const row = db.prepare(`SELECT watermark, last_full_at, deletions_since FROM ${STATE_TABLE} WHERE register = ?`).get(register.path) as
        | { watermark: string | null; last_full_at: string | null; deletions_since: string | null }
        | undefined;
      return { watermark: row?.watermark ?? null, lastFullAt: row?.last_full_at ?? null, deletionsSince: row?.deletions_since ?? null };
    },
    async saveState(register, state: RegisterState) {
      db.prepare(
        `INSERT INTO ${STATE_TABLE} (register, watermark, last_full_at, deletions_since) VALUES (?, ?, ?, ?) ON CONFLICT(register) DO UPDATE SET watermark = excluded.watermark, last_full_at = excluded.last_full_at, deletions_since = excluded.deletions_since`,
      ).run(register.path, state.watermark, state.lastFullAt, state.deletionsSince);
    },
    async records(register) {
      const rows = db.prepare(`SELECT * FROM ${quote(tableName(register))} ORDER BY updated_at, id`).all() as Record<string, unknown>[];
      return rows.map((row) => Object.fromEntries(Object.entries(register.columns).map(([n, k]) => [n, fromColumn(k, row[n])])));
    },
    async close() {
      db.close();
    },
  };
}
