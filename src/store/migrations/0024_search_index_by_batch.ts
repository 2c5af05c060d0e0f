import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/**
 * SQLite: an import's batch may index its new records' search words in one statement
 * (record-batches.ts) instead of the insert trigger's one FTS5 statement per row, a large part
 * of what a row costs SQLite (ADR 36). The batch puts a row in `records_fts_deferred`
 * for the duration of its upserts, and removes it, inside its own transaction: the table is
 * never committed non-empty, so every other writer (and every other connection) finds it empty
 * and the trigger indexes as before.
 *
 * The update trigger fired on every upsert, since ON CONFLICT sets search_text whether or not it
 * changed, re-indexing the words of every upserted record; `WHEN old.search_text IS NOT
 * new.search_text` re-indexes only changed words, a fraction of the CPU and WAL of a write that
 * keeps them (ADR 36). PostgreSQL's GIN index needs nothing of the kind.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'sqlite') return;
  await sql`CREATE TABLE records_fts_deferred (deferred integer NOT NULL)`.execute(db);
  await sql`DROP TRIGGER records_ai`.execute(db);
  await sql`CREATE TRIGGER records_ai AFTER INSERT ON records WHEN NOT EXISTS (SELECT 1 FROM records_fts_deferred) BEGIN
    INSERT INTO records_fts(rowid, search_text) VALUES (new.rowid, new.search_text); END`.execute(db);
  await sql`DROP TRIGGER records_au`.execute(db);
  await sql`CREATE TRIGGER records_au AFTER UPDATE OF search_text ON records WHEN old.search_text IS NOT new.search_text BEGIN
    INSERT INTO records_fts(records_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
    INSERT INTO records_fts(rowid, search_text) VALUES (new.rowid, new.search_text); END`.execute(db);
}
