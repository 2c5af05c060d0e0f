import type { Kysely } from 'kysely';
import { createAuthChangeSignals } from '../auth-change-triggers.js';
import type { Dialect } from '../database.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await createAuthChangeSignals(db, dialect);
}
