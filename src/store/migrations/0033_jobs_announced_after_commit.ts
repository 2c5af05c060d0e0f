import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // Committed jobs are announced by the process that wrote them, after its commit, on a session
  // of its own (dialects/postgres-jobs.ts). The trigger of 0003 notified inside every writing
  // transaction, and PostgreSQL serializes notifying commits cluster-wide, WAL flush included
  // (ADR 42). SQLite never had the trigger: its workers poll.
  if (dialect !== 'postgres') return;
  await sql`DROP TRIGGER delivery_jobs_notify ON delivery_jobs`.execute(db);
  await sql`DROP FUNCTION wsops_notify_jobs()`.execute(db);
}
