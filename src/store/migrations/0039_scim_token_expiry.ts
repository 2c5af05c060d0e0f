import { type Kysely, sql } from '#kysely';

/** A SCIM token may be given a life, as an API key has: `expires_at` (null: until revoked, as every token made before). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE scim_tokens ADD COLUMN expires_at text`.execute(db);
}
