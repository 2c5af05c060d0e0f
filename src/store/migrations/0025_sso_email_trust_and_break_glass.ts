import type { Kysely } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Whether single sign-on accepts an address whose provider sends no email_verified claim at
  // all (off: only email_verified true signs in).
  await db.schema
    .alterTable('workspace_sign_in')
    .addColumn('sso_trust_missing_email_verified', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // A break-glass link (wsops admin break-glass) signs its admin in once without a password,
  // also while password sign-in is off; an ordinary link then does not.
  await db.schema
    .alterTable('console_sign_in_links')
    .addColumn('break_glass', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
