import { type Kysely, sql } from '#kysely';

/**
 * An endpoint may filter the events it is sent by their content (issue 61, ADR 53): `filter`
 * holds the checked filter as canonical JSON text (webhooks/events/event-filter.ts); null: every event
 * it subscribes to, as every endpoint made before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_endpoints ADD COLUMN filter text`.execute(db);
}
