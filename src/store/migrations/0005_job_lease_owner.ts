import type { Kysely } from '#kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The claim that holds a job's lease (one token per claimed batch). A worker records an
  // outcome only where the job still carries its token, so a worker whose lease expired
  // (and whose job another worker re-claimed) cannot overwrite the newer attempt's result.
  await db.schema.alterTable('delivery_jobs').addColumn('locked_by', 'text').execute();
}
