import type { Kysely } from '#kysely';
import { KEY_COLUMNS_SINCE_0018 } from '../auth-change-triggers.js';
import { adapterOf, type Dialect } from '../database.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // ADR 29. Existing keys keep `checksummed = 0`: their secrets end in random characters,
  // so authentication looks them up even though their checksum does not match.
  await db.schema
    .alterTable('api_keys')
    .addColumn('checksummed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('last_used_ip', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('allowed_ips', 'text').execute();
  // Authentication now reads allowed_ips: a change to it must reach every key cache.
  await adapterOf(dialect).watchKeyColumns(db, KEY_COLUMNS_SINCE_0018);
}
