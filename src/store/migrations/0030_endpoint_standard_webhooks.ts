import type { Kysely } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Per endpoint: also send the Standard Webhooks headers (1) or the seed's signature alone (0).
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('standard_webhooks', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
