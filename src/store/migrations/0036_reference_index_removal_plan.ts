import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/**
 * The removal of dropped references (0034, 0035) joined `record_refs` with the old rows and
 * their expanded references in one query. Without statistics on `record_refs` (a new
 * deployment, a table that grew since its last ANALYZE, a server with autovacuum off), the
 * planner looked up the index by (workspace_id, source_id) only, before the references were
 * expanded, and so read every entry of the workspace for each action that changes a
 * transition's `held_asset_ids` (ADR 43). A materialised set of the references to
 * remove, joined the same way, was planned as a hash join over the whole index instead. Each
 * reference is now removed by its own DELETE naming the whole key, which no statistics can plan
 * as anything but a lookup. Most writes change no reference, and a statement that changes
 * many (an import batch) costs what it did with the join (ADR 43).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`CREATE OR REPLACE FUNCTION records_refs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE gone record;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.workspace_id = o.workspace_id AND n.id = o.id
          WHERE o.refs IS DISTINCT FROM n.refs) THEN
        RETURN NULL;
      END IF;
      FOR gone IN SELECT o.workspace_id, o.id, t FROM old_rows o JOIN new_rows n ON n.workspace_id = o.workspace_id AND n.id = o.id
          CROSS JOIN LATERAL jsonb_array_elements_text(o.refs::jsonb) AS t
        WHERE o.refs IS DISTINCT FROM n.refs LOOP
        DELETE FROM record_refs WHERE workspace_id = gone.workspace_id AND target_id = gone.t AND source_id = gone.id;
      END LOOP;
      INSERT INTO record_refs (workspace_id, target_id, source_id)
        SELECT n.workspace_id, t, n.id FROM new_rows n JOIN old_rows o ON o.workspace_id = n.workspace_id AND o.id = n.id
          CROSS JOIN LATERAL jsonb_array_elements_text(n.refs::jsonb) AS t
        WHERE o.refs IS DISTINCT FROM n.refs AND n.refs <> '[]' ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE OR REPLACE FUNCTION records_refs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE gone record;
    BEGIN
      FOR gone IN SELECT o.workspace_id, o.id, t FROM old_rows o CROSS JOIN LATERAL jsonb_array_elements_text(o.refs::jsonb) AS t
        WHERE o.refs <> '[]' LOOP
        DELETE FROM record_refs WHERE workspace_id = gone.workspace_id AND target_id = gone.t AND source_id = gone.id;
      END LOOP;
      RETURN NULL;
    END $$`.execute(db);
}
