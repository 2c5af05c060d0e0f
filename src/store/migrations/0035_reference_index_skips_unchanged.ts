import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/**
 * The update trigger of the reference index (0034) ran its DELETE and INSERT over the transition
 * tables on every statement that updated records, and most updates change no reference: a PUT, a
 * domain action, an import of changed fields. Those two statements cost most of a one-row
 * upsert even when they touched nothing (ADR 43). A first look at the transition tables now ends the trigger when no row's references
 * changed. SQLite's row triggers already fire only `WHEN old.refs IS NOT new.refs`.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`CREATE OR REPLACE FUNCTION records_refs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.workspace_id = o.workspace_id AND n.id = o.id
          WHERE o.refs IS DISTINCT FROM n.refs) THEN
        RETURN NULL;
      END IF;
      DELETE FROM record_refs r USING (
          SELECT o.workspace_id, o.id, t FROM old_rows o JOIN new_rows n ON n.workspace_id = o.workspace_id AND n.id = o.id
            CROSS JOIN LATERAL jsonb_array_elements_text(o.refs::jsonb) AS t
          WHERE o.refs IS DISTINCT FROM n.refs) gone
        WHERE r.workspace_id = gone.workspace_id AND r.target_id = gone.t AND r.source_id = gone.id;
      INSERT INTO record_refs (workspace_id, target_id, source_id)
        SELECT n.workspace_id, t, n.id FROM new_rows n JOIN old_rows o ON o.workspace_id = n.workspace_id AND o.id = n.id
          CROSS JOIN LATERAL jsonb_array_elements_text(n.refs::jsonb) AS t
        WHERE o.refs IS DISTINCT FROM n.refs AND n.refs <> '[]' ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`.execute(db);
}
