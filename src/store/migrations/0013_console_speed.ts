import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // The 24 h / 7 d chart and the Overview's success rate read every attempt of the window,
  // slow for a busy endpoint's week of history (ADR 9). This rollup holds one
  // row per endpoint, hour and distinct latency, so the chart reads at most 168 hours ×
  // the endpoint's latency spread, however many attempts were made, and the median stays
  // exact (the lower middle of the latencies, found from cumulative counts).
  await db.schema
    .createTable('delivery_attempt_hours')
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('succeeded', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('delivery_attempt_hours_pk', ['endpoint_id', 'hour', 'latency_ms'])
    .execute();
  // Kept by the database on every insert of an attempt, in the inserting transaction (the
  // dispatcher's bookkeeping), whoever writes them. PostgreSQL: once per statement over
  // the inserted rows (the dispatcher inserts a batch in one statement), keys in order so
  // two concurrent batches lock shared rows in the same order. SQLite: a row trigger
  // (in-process, microseconds).
  if (dialect === 'postgres') {
    await sql`CREATE FUNCTION wsops_delivery_attempt_hours() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO delivery_attempt_hours (endpoint_id, hour, latency_ms, attempts, succeeded)
        SELECT endpoint_id, substr(attempted_at, 1, 13), latency_ms, count(*), count(*) FILTER (WHERE outcome = 'succeeded')
        FROM new_attempts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (endpoint_id, hour, latency_ms) DO UPDATE SET
          attempts = delivery_attempt_hours.attempts + excluded.attempts,
          succeeded = delivery_attempt_hours.succeeded + excluded.succeeded;
        RETURN NULL;
      END $$`.execute(db);
    await sql`CREATE TRIGGER delivery_attempts_hours AFTER INSERT ON delivery_attempts
      REFERENCING NEW TABLE AS new_attempts FOR EACH STATEMENT EXECUTE FUNCTION wsops_delivery_attempt_hours()`.execute(db);
  } else {
    await sql`CREATE TRIGGER delivery_attempts_hours AFTER INSERT ON delivery_attempts BEGIN
        INSERT INTO delivery_attempt_hours (endpoint_id, hour, latency_ms, attempts, succeeded)
        VALUES (NEW.endpoint_id, substr(NEW.attempted_at, 1, 13), NEW.latency_ms, 1, NEW.outcome = 'succeeded')
        ON CONFLICT (endpoint_id, hour, latency_ms) DO UPDATE SET
          attempts = attempts + 1, succeeded = succeeded + excluded.succeeded;
      END`.execute(db);
  }
  await sql`INSERT INTO delivery_attempt_hours (endpoint_id, hour, latency_ms, attempts, succeeded)
    SELECT endpoint_id, substr(attempted_at, 1, 13), latency_ms, count(*), sum(CASE WHEN outcome = 'succeeded' THEN 1 ELSE 0 END)
    FROM delivery_attempts GROUP BY endpoint_id, substr(attempted_at, 1, 13), latency_ms`.execute(db);
}
