/** The mirror in PostgreSQL (pg, an optional peer dependency loaded only when used). */
import type pg from 'pg';
import { loadDriver } from './driver.js';
import { fromColumn, type MirrorStore, quote, SEEN_COLUMN, STATE_TABLE, tableName, toColumn } from './store.js';

/** The advisory lock's name: mirrors sharing a database take turns creating its tables. */
const PREPARE_LOCK = 'wsops-mirror:prepare';

const SQL_TYPES = { text: 'text', integer: 'bigint', number: 'double precision', boolean: 'boolean', json: 'jsonb' } as const;

export async function openPostgresStore(url: string): Promise<MirrorStore> {
  const pgModule = await loadDriver<typeof pg>('pg', 'PostgreSQL');
  const pool = new pgModule.Pool({ connectionString: url, max: 2 });
  // A session the server ends while it sits idle in the pool (a restart, a failover,
  // idle_session_timeout) is reported here, and an 'error' nobody listens to ends the process.
  // The pool has already dropped that session and opens another at the next query.
  pool.on('error', () => undefined);
  // Fail now (a clear configuration error) rather than at the first page.
  await pool.query('SELECT 1');

  return {
    async prepare(registers) {
      // CREATE TABLE IF NOT EXISTS is not safe between sessions: two mirrors starting at once on
      // an empty database both create, and one fails on pg_type's unique index. One transaction
      // under a transaction-scoped advisory lock makes the second wait and then find the tables.
      const session = await pool.connect();
      try {
        await session.query('BEGIN');
        await session.query('SELECT pg_advisory_xact_lock(hashtext($1))', [PREPARE_LOCK]);
        await session.query(`CREATE TABLE IF NOT EXISTS ${STATE_TABLE} (register text PRIMARY KEY, watermark text, last_full_at text)`);
        // A mirror made before the deletions feed gains its position column.
        await session.query(`ALTER TABLE ${STATE_TABLE} ADD COLUMN IF NOT EXISTS deletions_since text`);
        for (const register of registers) {
          const table = quote(tableName(register));
          const columns = Object.entries(register.columns).filter(([name]) => name !== 'id');
          await session.query(
            `CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY, ${columns.map(([n, k]) => `${quote(n)} ${SQL_TYPES[k]}`).join(', ')}, ${SEEN_COLUMN} text)`,
          );
          for (const [n, k] of columns) await session.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${quote(n)} ${SQL_TYPES[k]}`);
        }
        await session.query('COMMIT');
      } catch (error) {
        await session.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        session.release();
      }
    },
    async upsert(register, records, walkId) {
      if (records.length === 0) return;
      const kinds = Object.entries(register.columns);
      const names = [...kinds.map(([n]) => n), SEEN_COLUMN];
      const values: unknown[] = [];
      const rows: string[] = [];
      for (const record of records) {
        const start = values.length;
        for (const [n, k] of kinds) values.push(toColumn(k, record[n], false));
        values.push(walkId);
        rows.push(`(${names.map((_, i) => `$${start + i + 1}`).join(', ')})`);
      }
      await pool.query(
        `INSERT INTO ${quote(tableName(register))} (${names.map(quote).join(', ')}) VALUES ${rows.join(', ')} ON CONFLICT (id) DO UPDATE SET ${names
          .filter((n) => n !== 'id')
          .map((n) => `${quote(n)} = excluded.${quote(n)}`)
          .join(', ')}`,
        values,
      );
    },
    async removeUnseen(register, walkId) {
      const result = await pool.query(`DELETE FROM ${quote(tableName(register))} WHERE ${SEEN_COLUMN} IS DISTINCT FROM $1`, [walkId]);
      return result.rowCount ?? 0;
    },
    async applyDeletions(register, tombstones) {
      if (tombstones.length === 0) return 0;
      // One statement: atomic like the SQLite store's transaction.
      const result = await pool.query(
        `DELETE FROM ${quote(tableName(register))} AS m USING unnest($1::text[], $2::text[]) AS t(id, deleted_at)
         WHERE m.id = t.id AND (m.updated_at IS NULL OR m.updated_at < t.deleted_at)`,
        [tombstones.map((t) => t.id), tombstones.map((t) => t.deleted_at)],
      );
      return result.rowCount ?? 0;
    },
    async state(register) {
      const { rows } = await pool.query(`SELECT watermark, last_full_at, deletions_since FROM ${STATE_TABLE} WHERE register = $1`, [
        register.path,
      ]);
      return {
        watermark: rows[0]?.watermark ?? null,
        lastFullAt: rows[0]?.last_full_at ?? null,
        deletionsSince: rows[0]?.deletions_since ?? null,
      };
    },
    async saveState(register, state) {
      await pool.query(
        `INSERT INTO ${STATE_TABLE} (register, watermark, last_full_at, deletions_since) VALUES ($1, $2, $3, $4) ON CONFLICT (register) DO UPDATE SET watermark = excluded.watermark, last_full_at = excluded.last_full_at, deletions_since = excluded.deletions_since`,
        [register.path, state.watermark, state.lastFullAt, state.deletionsSince],
      );
    },
    async records(register) {
      const { rows } = await pool.query(`SELECT * FROM ${quote(tableName(register))} ORDER BY updated_at, id`);
      return rows.map((row: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(register.columns).map(([n, k]) => [n, fromColumn(k, row[n])])),
      );
    },
    async close() {
      await pool.end();
    },
  };
}
