import type { Insertable, Kysely } from '#kysely';
import type { DB } from './schema.js';

/** Inserts rows in multi-row statements of at most `size` rows (SQLite limits bound parameters). */
export async function insertBatches<T extends keyof DB & string>(
  db: Kysely<DB>,
  table: T,
  rows: readonly Insertable<DB[T]>[],
  size = 400,
): Promise<void> {
  for (let i = 0; i < rows.length; i += size) {
    await db
      .insertInto(table)
      .values(rows.slice(i, i + size) as Insertable<DB[T]>[])
      .execute();
  }
}
