import type { Kysely } from '#kysely';
import { adapterOf, type Dialect } from '../database.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await adapterOf(dialect).createAuthChangeSignals(db);
}
