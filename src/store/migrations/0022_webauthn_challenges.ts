import type { Kysely } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The challenges of passkey ceremonies (ADR 32): each is bound to the
  // console session that asked for it and to one purpose (register, sign in, confirm a
  // removal), used at most once (deleted as it is checked) and refused after expires_at.
  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('challenge', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webauthn_challenges_expiry').on('webauthn_challenges').column('expires_at').execute();
}
