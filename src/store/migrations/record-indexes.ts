import { type Kysely, sql } from '#kysely';

/**
 * The records indexes: the paging and sync order is (updated_at, id), so every list query is a
 * range scan over one of them, whatever the depth. Created by 0001, again by 0015's rebuild.
 */
export async function createRecordIndexes(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('records_order').on('records').columns(['workspace_id', 'register', 'updated_at', 'id']).execute();
  for (const col of ['location_id', 'status', 'category', 'record_type']) {
    await db.schema
      .createIndex(`records_by_${col}`)
      .on('records')
      .columns(['workspace_id', 'register', col, 'updated_at', 'id'])
      .where(sql.ref(col), 'is not', null)
      .execute();
  }
}

/** SQLite: the triggers that keep the external-content FTS5 index in step with records. */
export async function createFtsTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TRIGGER records_ai AFTER INSERT ON records BEGIN
    INSERT INTO records_fts(rowid, search_text) VALUES (new.rowid, new.search_text); END`.execute(db);
  await sql`CREATE TRIGGER records_ad AFTER DELETE ON records BEGIN
    INSERT INTO records_fts(records_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text); END`.execute(db);
  await sql`CREATE TRIGGER records_au AFTER UPDATE OF search_text ON records BEGIN
    INSERT INTO records_fts(records_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
    INSERT INTO records_fts(rowid, search_text) VALUES (new.rowid, new.search_text); END`.execute(db);
}
