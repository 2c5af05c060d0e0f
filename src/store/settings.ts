import { randomBytes } from 'node:crypto';
import type { Kysely } from '#kysely';
import type { DB } from './schema.js';

/**
 * Returns the stored server secret, generating it on first use. Several processes may race
 * here on PostgreSQL: the insert ignores conflicts and everyone reads back the winner.
 */
export async function ensureServerSecret(db: Kysely<DB>): Promise<string> {
  const candidate = randomBytes(32).toString('hex');
  await db
    .insertInto('settings')
    .values({ name: 'server_secret', value: candidate })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('settings').select('value').where('name', '=', 'server_secret').executeTakeFirstOrThrow();
  return row.value;
}
