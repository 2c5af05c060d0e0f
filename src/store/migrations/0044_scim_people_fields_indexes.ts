import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/** The short rows' columns a SCIM filter looks up by equality or prefix (docs/adr/0055-scim-filters-served-by-indexes.md). */
const LOOKED_UP = [
  'user_name',
  'work_email',
  'display_name',
  'given_name',
  'family_name',
  'external_id',
  'employee_number',
  'manager_id',
] as const;

/** Indexes of migration 0037 over the people's documents that only SCIM filters read, now served by the short rows. */
const REPLACED = ['display_name', 'given_name', 'family_name'] as const;

/**
 * SCIM filters are answered by indexes over `scim_people_fields` (migration 0043) rather than by
 * a lookup in the people's documents joined back to the short rows, or by a scan:
 * - one index per compared column, keyed by workspace and value, then `deleted_at` (every list
 *   leaves out the people a DELETE kept): an `eq` or `sw` is counted and paged in the index
 *   alone, each entry carrying the person's id (the table's key), and `pr` counts who has no value. Not partial on `deleted_at`:
 *   SQLite would then prefer one of them, and a sort, to the key's order for a page that walks ids;
 * - the people who are not ACTIVE (`active eq false`), by id, so a page of them is read in order;
 * - 0037's expression indexes over the documents' names go: nothing else reads them, and each
 *   cost a JSON parse per person written.
 * PostgreSQL's indexes take text_pattern_ops: a prefix is a LIKE, whatever the collation.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const ops = dialect === 'postgres' ? ' text_pattern_ops' : '';
  for (const column of LOOKED_UP) {
    await sql
      .raw(`CREATE INDEX scim_people_fields_${column} ON scim_people_fields (workspace_id, ${column}${ops}, deleted_at)`)
      .execute(db);
  }
  await sql`CREATE INDEX scim_people_fields_inactive ON scim_people_fields (workspace_id, person_id, status, deleted_at)
    WHERE status IS NULL OR status <> 'ACTIVE'`.execute(db);
  for (const field of REPLACED) await sql.raw(`DROP INDEX records_people_${field}`).execute(db);
  await sql`ANALYZE scim_people_fields`.execute(db);
}
