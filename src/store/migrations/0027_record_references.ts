import { type Kysely, sql } from '#kysely';
import { referenceTargets } from '../../registers/reference-targets.js';
import type { Dialect } from '../database.js';

/**
 * The reverse index of references, so that a delete finds who still names a record without
 * reading the workspace (ADR 43). `records.refs` holds the ids a record names (a JSON array,
 * computed by toRow() from the register's declaration); triggers keep `record_refs`, one row per
 * (target, source), in step with it on every write path (the write routes, the import, the
 * seed, corrections and actions, `wsops copy`). A write that leaves a record's references as
 * they were leaves the index alone.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await sql`ALTER TABLE records ADD COLUMN refs text NOT NULL DEFAULT '[]'`.execute(db);
  if (dialect === 'sqlite') {
    await sql`CREATE TABLE record_refs (workspace_id text NOT NULL, target_id text NOT NULL, source_id text NOT NULL,
      PRIMARY KEY (workspace_id, target_id, source_id)) WITHOUT ROWID`.execute(db);
    await sql`CREATE TRIGGER records_refs_ai AFTER INSERT ON records WHEN new.refs <> '[]' BEGIN
      INSERT OR IGNORE INTO record_refs (workspace_id, target_id, source_id) SELECT new.workspace_id, value, new.id FROM json_each(new.refs); END`.execute(
      db,
    );
    await sql`CREATE TRIGGER records_refs_au AFTER UPDATE OF refs ON records WHEN old.refs IS NOT new.refs BEGIN
      DELETE FROM record_refs WHERE workspace_id = old.workspace_id AND source_id = old.id AND target_id IN (SELECT value FROM json_each(old.refs));
      INSERT OR IGNORE INTO record_refs (workspace_id, target_id, source_id) SELECT new.workspace_id, value, new.id FROM json_each(new.refs); END`.execute(
      db,
    );
    await sql`CREATE TRIGGER records_refs_ad AFTER DELETE ON records WHEN old.refs <> '[]' BEGIN
      DELETE FROM record_refs WHERE workspace_id = old.workspace_id AND source_id = old.id AND target_id IN (SELECT value FROM json_each(old.refs)); END`.execute(
      db,
    );
  } else {
    await sql`CREATE TABLE record_refs (workspace_id text NOT NULL, target_id text NOT NULL, source_id text NOT NULL,
      PRIMARY KEY (workspace_id, target_id, source_id))`.execute(db);
    // Statement-level triggers over transition tables: one INSERT ... SELECT per statement, so an
    // import's batch (one multi-row upsert) keeps the index in one step instead of once per row.
    await sql`CREATE FUNCTION records_refs_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO record_refs (workspace_id, target_id, source_id)
          SELECT n.workspace_id, t, n.id FROM new_rows n CROSS JOIN LATERAL jsonb_array_elements_text(n.refs::jsonb) AS t
          WHERE n.refs <> '[]' ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`.execute(db);
    await sql`CREATE FUNCTION records_refs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM record_refs r USING old_rows o JOIN new_rows n ON n.workspace_id = o.workspace_id AND n.id = o.id
          WHERE o.refs IS DISTINCT FROM n.refs AND r.workspace_id = o.workspace_id AND r.source_id = o.id
            AND r.target_id IN (SELECT jsonb_array_elements_text(o.refs::jsonb));
        INSERT INTO record_refs (workspace_id, target_id, source_id)
          SELECT n.workspace_id, t, n.id FROM new_rows n JOIN old_rows o ON o.workspace_id = n.workspace_id AND o.id = n.id
            CROSS JOIN LATERAL jsonb_array_elements_text(n.refs::jsonb) AS t
          WHERE o.refs IS DISTINCT FROM n.refs AND n.refs <> '[]' ON CONFLICT DO NOTHING;
        RETURN NULL;
      END $$`.execute(db);
    await sql`CREATE FUNCTION records_refs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM record_refs r USING old_rows o
          WHERE o.refs <> '[]' AND r.workspace_id = o.workspace_id AND r.source_id = o.id
            AND r.target_id IN (SELECT jsonb_array_elements_text(o.refs::jsonb));
        RETURN NULL;
      END $$`.execute(db);
    await sql`CREATE TRIGGER records_refs_ai AFTER INSERT ON records REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION records_refs_inserted()`.execute(db);
    await sql`CREATE TRIGGER records_refs_au AFTER UPDATE ON records REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION records_refs_updated()`.execute(db);
    await sql`CREATE TRIGGER records_refs_ad AFTER DELETE ON records REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION records_refs_deleted()`.execute(db);
  }
  // The records stored before: their references, in pages of the primary key (the triggers fill the index).
  const pageRows = 2000;
  let after = { workspace_id: '', id: '' };
  for (;;) {
    const { rows } = await sql<{ workspace_id: string; id: string; register: string; doc: string }>`
      SELECT workspace_id, id, register, doc FROM records
      WHERE workspace_id > ${after.workspace_id} OR (workspace_id = ${after.workspace_id} AND id > ${after.id})
      ORDER BY workspace_id, id LIMIT ${pageRows}`.execute(db);
    for (const row of rows) {
      const refs = referenceTargets(row.register, row.doc);
      if (refs !== '[]')
        await sql`UPDATE records SET refs = ${refs} WHERE workspace_id = ${row.workspace_id} AND id = ${row.id}`.execute(db);
    }
    const last = rows.at(-1);
    if (!last || rows.length < pageRows) break;
    after = { workspace_id: last.workspace_id, id: last.id };
  }
}
