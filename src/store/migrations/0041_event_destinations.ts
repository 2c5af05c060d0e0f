import { type Kysely, sql } from '#kysely';

/**
 * Event destinations (ADR 52): an endpoint whose URL is `amqps://…` (RabbitMQ) or `tls://…`
 * (NATS JetStream) instead of `https://…`. The URL column keeps the displayed form (no password);
 * the broker password is sealed like the signing secret, in a column of its own; the exchange,
 * routing-key template and subject template are the kind's settings (null for the other kinds).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['destination_secret_ciphertext', 'exchange', 'routing_key', 'subject']) {
    await sql`ALTER TABLE webhook_endpoints ADD COLUMN ${sql.raw(column)} text`.execute(db);
  }
}
