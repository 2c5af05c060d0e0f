import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/**
 * Issue 58's benchmark: a `types` filter of the events API read the listing index (0038) and
 * skipped every event of the other types, seven rows for each one served when one type in eight
 * is asked for, and more for a rarer one. `(workspace_id, type, created_at, id)` serves a filter
 * of one type as one range scan in the list's order; for several types SQLite reads it once per
 * type and merges the few rows a page needs, or keeps the listing index, as the planner finds cheaper.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema.createIndex('events_types').on('events').columns(['workspace_id', 'type', 'created_at', 'id']).execute();
  // SQLite plans the events page by the statistics (0037 ran ANALYZE): the new index needs its own.
  if (dialect === 'sqlite') {
    await sql`PRAGMA analysis_limit = 1000`.execute(db);
    await sql`ANALYZE events`.execute(db);
  }
}
