import type { Kysely } from 'kysely';
import type { DB } from '../store/schema.js';

/**
 * Deliveries owed to a disabled endpoint are kept as `held`: out of the `pending` range of the
 * queue index, so claims never walk past a disabled endpoint's backlog, and back to `pending`
 * (due at once) when the endpoint is active again. Both statements use the (state, …) index.
 */
export async function holdOwedJobs(trx: Kysely<DB>, endpointId: string, at: string): Promise<void> {
  await trx
    .updateTable('delivery_jobs')
    .set({ state: 'held', lease_until: null, updated_at: at })
    .where('state', '=', 'pending')
    .where('endpoint_id', '=', endpointId)
    .execute();
}

export async function releaseOwedJobs(trx: Kysely<DB>, endpointId: string, at: string): Promise<void> {
  await trx
    .updateTable('delivery_jobs')
    .set({ state: 'pending', updated_at: at })
    .where('state', '=', 'held')
    .where('endpoint_id', '=', endpointId)
    .execute();
}
