import type { Kysely } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Second factors of console admins (TOTP, recovery codes, passkeys) and each workspace's
  // sign-in rules and OpenID Connect single sign-on (ADRs 30 and 31).
  await db.schema
    .alterTable('console_sessions')
    .addColumn('second_factor_pending', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createTable('admin_totp')
    .addColumn('admin_id', 'text', (c) => c.primaryKey())
    .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_step', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('admin_recovery_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('admin_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('admin_recovery_codes_admin').on('admin_recovery_codes').column('admin_id').execute();
  await db.schema
    .createTable('admin_passkeys')
    .addColumn('credential_id', 'text', (c) => c.primaryKey())
    .addColumn('admin_id', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull())
    .addColumn('transports', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('admin_passkeys_admin').on('admin_passkeys').column('admin_id').execute();
  await db.schema
    .createTable('workspace_sign_in')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey())
    .addColumn('require_second_factor', 'integer', (c) => c.notNull())
    .addColumn('password_sign_in', 'integer', (c) => c.notNull())
    .addColumn('sso_issuer', 'text')
    .addColumn('sso_client_id', 'text')
    .addColumn('sso_client_secret_ciphertext', 'text')
    .addColumn('sso_domain', 'text')
    .addColumn('sso_create_admins', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}
