import type { Kysely } from '#kysely';

/**
 * Which process runs an import, and when it last showed it was alive: an import whose process
 * is gone (killed, the machine lost) is then marked interrupted instead of reading as running
 * forever (src/writes/import-runs.ts). Rows from before have neither: their process belonged to
 * the version that was stopped to migrate.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('record_imports').addColumn('owner', 'text').execute();
  await db.schema.alterTable('record_imports').addColumn('alive_at', 'text').execute();
}
