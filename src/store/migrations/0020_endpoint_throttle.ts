import type { Kysely } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A per-endpoint throttle (ADR 33): at most max_per_second deliveries a second
  // (NULL: none). throttle_next_at is when the endpoint may next be sent anything; the
  // claim reads and moves it under its lock, so the rate holds across worker processes.
  await db.schema.alterTable('webhook_endpoints').addColumn('max_per_second', 'integer').execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('throttle_next_at', 'text').execute();
}
