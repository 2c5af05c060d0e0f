import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // PostgreSQL tells idle delivery workers when jobs are committed (LISTEN wsops_jobs), so
  // they can poll rarely when idle and still start within milliseconds. NOTIFY is sent at
  // commit, once per transaction. SQLite workers poll (a local query costs microseconds).
  if (dialect !== 'postgres') return;
  await sql`CREATE FUNCTION wsops_notify_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('wsops_jobs', ''); RETURN NULL; END $$`.execute(db);
  await sql`CREATE TRIGGER delivery_jobs_notify AFTER INSERT ON delivery_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION wsops_notify_jobs()`.execute(db);
}
