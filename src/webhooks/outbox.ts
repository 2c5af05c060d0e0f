/**
 * The transactional outbox: an event is written in the same transaction as the register change
 * that causes it, together with one delivery job per endpoint that should receive it. A change
 * never commits without its event, and no event exists for a change that rolled back.
 */
import type { Kysely } from 'kysely';
import { newId } from '../ids.js';
import type { DB } from '../store/schema.js';
import { EVENT_TYPES, type EventType, VERIFICATION_EVENT } from './event-types.js';

export interface EmittedEvent {
  id: string;
  type: string;
  /** Delivery jobs created (one per receiving endpoint). */
  jobs: number;
}

function body(id: string, type: string, createdAt: string, data: unknown): string {
  return JSON.stringify({ id, type, created: createdAt, api_version: '1', data });
}

async function insertEvent(trx: Kysely<DB>, workspaceId: string, type: string, data: unknown, now: number) {
  const id = newId('evt');
  const createdAt = new Date(now).toISOString();
  await trx
    .insertInto('events')
    .values({ id, workspace_id: workspaceId, type, created_at: createdAt, body: body(id, type, createdAt, data) })
    .execute();
  return { id, createdAt };
}

async function insertJobs(trx: Kysely<DB>, workspaceId: string, eventId: string, endpointIds: readonly string[], at: string) {
  if (endpointIds.length === 0) return;
  await trx
    .insertInto('delivery_jobs')
    .values(
      endpointIds.map((endpointId) => ({
        id: newId('job'),
        workspace_id: workspaceId,
        event_id: eventId,
        endpoint_id: endpointId,
        state: 'pending' as const,
        attempts: 0,
        next_attempt_at: at,
        lease_until: null,
        created_at: at,
        updated_at: at,
      })),
    )
    .execute();
}

/**
 * Emits a domain event inside the caller's transaction, fanned out to every active endpoint
 * that subscribed to it and whose scopes cover it.
 */
export async function emitEvent(trx: Kysely<DB>, workspaceId: string, type: EventType, data: unknown, now: number): Promise<EmittedEvent> {
  const event = await insertEvent(trx, workspaceId, type, data, now);
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'events', 'scopes'])
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'active')
    .execute();
  const scope = EVENT_TYPES[type].scope;
  const receivers = endpoints.filter((e) => e.events.split(' ').includes(type) && e.scopes.split(' ').includes(scope)).map((e) => e.id);
  await insertJobs(trx, workspaceId, event.id, receivers, event.createdAt);
  return { id: event.id, type, jobs: receivers.length };
}

/** The signed challenge sent to one endpoint after registration or re-verification. */
export async function emitVerification(trx: Kysely<DB>, workspaceId: string, endpointId: string, challenge: string, now: number) {
  const event = await insertEvent(trx, workspaceId, VERIFICATION_EVENT, { endpoint_id: endpointId, challenge }, now);
  await insertJobs(trx, workspaceId, event.id, [endpointId], event.createdAt);
  return { id: event.id, type: VERIFICATION_EVENT, jobs: 1 };
}
