import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';
import { createFtsTriggers, createRecordIndexes } from './record-indexes.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // Ids are chosen by the system of record (ADR 20): unique within a workspace, so two
  // workspaces may hold the same id (an export of one imports into another unchanged).
  if (dialect === 'postgres') {
    await sql`ALTER TABLE records DROP CONSTRAINT records_pkey`.execute(db);
    await sql`ALTER TABLE records ADD PRIMARY KEY (workspace_id, id)`.execute(db);
    return;
  }
  // SQLite cannot change a primary key in place: copy into a new table, keeping each
  // row's rowid so the external-content FTS index (keyed by rowid) stays valid, then put
  // back the indexes and the triggers that dropping the old table removed.
  await sql`CREATE TABLE records_new (
    id text NOT NULL, workspace_id text NOT NULL, register text NOT NULL,
    created_at text NOT NULL, updated_at text NOT NULL,
    location_id text, status text, category text, record_type text,
    search_text text NOT NULL, doc text NOT NULL,
    PRIMARY KEY (workspace_id, id))`.execute(db);
  await sql`INSERT INTO records_new (rowid, id, workspace_id, register, created_at, updated_at, location_id, status, category, record_type, search_text, doc)
    SELECT rowid, id, workspace_id, register, created_at, updated_at, location_id, status, category, record_type, search_text, doc FROM records`.execute(
    db,
  );
  await sql`DROP TABLE records`.execute(db);
  await sql`ALTER TABLE records_new RENAME TO records`.execute(db);
  await createRecordIndexes(db);
  await createFtsTriggers(db);
}
