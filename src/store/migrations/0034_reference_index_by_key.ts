import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/**
 * The reference index's update and delete triggers (0027) found the rows to remove with
 * `target_id IN (SELECT jsonb_array_elements_text(...))`, a filter PostgreSQL cannot turn into a
 * key: it read the whole of `record_refs` for every statement that updated or deleted records,
 * whether or not any reference changed, so a single PUT cost as much as the workspace's
 * references (ADR 43). Joined with the old references expanded first, each row to remove is one
 * primary-key lookup. SQLite's row triggers already look up by key.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`CREATE OR REPLACE FUNCTION records_refs_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
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
  await sql`CREATE OR REPLACE FUNCTION records_refs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM record_refs r USING (
          SELECT o.workspace_id, o.id, t FROM old_rows o CROSS JOIN LATERAL jsonb_array_elements_text(o.refs::jsonb) AS t
          WHERE o.refs <> '[]') gone
        WHERE r.workspace_id = gone.workspace_id AND r.target_id = gone.t AND r.source_id = gone.id;
      RETURN NULL;
    END $$`.execute(db);
}
