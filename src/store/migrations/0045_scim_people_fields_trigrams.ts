import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/** The short rows' columns a `co` filter is likely to name: what people type, compared ignoring case. */
const SEARCHED = ['user_name', 'work_email', 'display_name', 'given_name', 'family_name'] as const;

/**
 * PostgreSQL: a `co` filter (`displayName co "ders M"`) is answered by a pg_trgm GIN index over
 * the short rows' searched columns, the filter written as an escaped LIKE '%…%' (exact: the
 * index only proposes candidates, LIKE decides), instead of testing every person's row
 * (docs/adr/0055-scim-filters-served-by-indexes.md). Where the extension cannot be created (a role
 * without the right, a server without contrib), the migration still succeeds without the index
 * and `co` stays a scan of the short rows, as before. SQLite: nothing (its `co` stays a scan).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  // An exception block runs in a subtransaction: a refusal rolls back this statement only.
  await sql`DO $$ BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
  EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm is not available (%): SCIM co filters scan the short rows', SQLERRM;
  END $$`.execute(db);
  // The operator class named in the schema the extension lives in, wherever that is.
  const columns = SEARCHED.map((c) => `${c} %1$I.gin_trgm_ops`).join(', ');
  await sql
    .raw(`DO $$ DECLARE schema_name name; BEGIN
    SELECT n.nspname INTO schema_name FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm';
    IF schema_name IS NOT NULL THEN
      EXECUTE format('CREATE INDEX scim_people_fields_trigrams ON scim_people_fields USING gin (${columns})', schema_name);
    END IF;
  END $$`)
    .execute(db);
}
