/**
 * The transactional outbox: an event is written in the same transaction as the register change
 * that causes it, together with one delivery job per endpoint that should receive it. A change
 * never commits without its event, and no event exists for a change that rolled back.
 */
import type { Kysely } from '#kysely';
import { newId } from '../ids.js';
import { insertBatches } from '../store/insert-batches.js';
import type { DB } from '../store/schema.js';
import { EVENT_TYPES, type EventType, eventData, TEST_EVENT, VERIFICATION_EVENT } from './event-types.js';

export interface EmittedEvent {
  id: string;
  type: string;
  /** Delivery jobs created (one per receiving endpoint). */
  jobs: number;
}

function body(id: string, type: string, createdAt: string, data: unknown): string {
  return JSON.stringify({ id, type, created: createdAt, api_version: '1', data });
}

function eventRow(workspaceId: string, type: string, data: unknown, createdAt: string): DB['events'] {
  const id = newId('evt');
  return { id, workspace_id: workspaceId, type, created_at: createdAt, body: body(id, type, createdAt, data) };
}

function jobRows(
  workspaceId: string,
  eventId: string,
  eventType: string,
  endpointIds: readonly string[],
  at: string,
): DB['delivery_jobs'][] {
  return endpointIds.map((endpointId) => ({
    id: newId('job'),
    workspace_id: workspaceId,
    event_id: eventId,
    endpoint_id: endpointId,
    event_type: eventType,
    state: 'pending' as const,
    attempts: 0,
    next_attempt_at: at,
    lease_until: null,
    locked_by: null,
    created_at: at,
    updated_at: at,
  }));
}

export interface PendingEvent {
  type: EventType;
  data: unknown;
}

/** What the fan-out reads of an active endpoint. */
export interface Receiver {
  id: string;
  events: string;
  scopes: string;
}

/** The active endpoints of a workspace, as the fan-out reads them. */
export function activeEndpoints(trx: Kysely<DB>, workspaceId: string): Promise<Receiver[]> {
  return trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'events', 'scopes'])
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'active')
    .execute();
}

/** A domain event's row, not yet written (its id is known from here on). */
export function newEvent(workspaceId: string, type: EventType, data: unknown, now: number): DB['events'] {
  return eventRow(workspaceId, type, data, new Date(now).toISOString());
}

/**
 * The delivery jobs of `events`: one per event and active endpoint that subscribed to its type
 * and whose scopes cover it.
 */
export function fanOut(endpoints: readonly Receiver[], events: readonly DB['events'][]): DB['delivery_jobs'][] {
  const jobs: DB['delivery_jobs'][] = [];
  for (const e of events) {
    const scope = EVENT_TYPES[e.type as EventType].scope;
    const receivers = endpoints
      .filter((ep) => ep.events.split(' ').includes(e.type) && ep.scopes.split(' ').includes(scope))
      .map((ep) => ep.id);
    jobs.push(...jobRows(e.workspace_id, e.id, e.type, receivers, e.created_at));
  }
  return jobs;
}

/**
 * Emits domain events inside the caller's transaction, each fanned out to every active
 * endpoint that subscribed to it and whose scopes cover it. Several events of one transaction
 * share one endpoint lookup and one insert per table.
 */
export async function emitEvents(
  trx: Kysely<DB>,
  workspaceId: string,
  events: readonly PendingEvent[],
  now: number,
): Promise<EmittedEvent[]> {
  if (events.length === 0) return [];
  const endpoints = await activeEndpoints(trx, workspaceId);
  const eventRows = events.map((e) => newEvent(workspaceId, e.type, e.data, now));
  const jobs = fanOut(endpoints, eventRows);
  await insertBatches(trx, 'events', eventRows);
  await insertBatches(trx, 'delivery_jobs', jobs);
  return eventRows.map((e) => ({ id: e.id, type: e.type, jobs: jobs.filter((j) => j.event_id === e.id).length }));
}

/** Emits one domain event inside the caller's transaction (see emitEvents). */
export async function emitEvent(trx: Kysely<DB>, workspaceId: string, type: EventType, data: unknown, now: number): Promise<EmittedEvent> {
  const [emitted] = await emitEvents(trx, workspaceId, [{ type, data }], now);
  return emitted as EmittedEvent;
}

/** An event for one endpoint only, needing no subscription (verification, test). */
async function emitToEndpoint(trx: Kysely<DB>, workspaceId: string, endpointId: string, type: string, data: unknown, now: number) {
  const row = eventRow(workspaceId, type, data, new Date(now).toISOString());
  await insertBatches(trx, 'events', [row]);
  await insertBatches(trx, 'delivery_jobs', jobRows(workspaceId, row.id, type, [endpointId], row.created_at));
  return { id: row.id, type, jobs: 1 };
}

/** The signed challenge sent to one endpoint after registration or re-verification. */
export function emitVerification(trx: Kysely<DB>, workspaceId: string, endpointId: string, challenge: string, now: number) {
  return emitToEndpoint(trx, workspaceId, endpointId, VERIFICATION_EVENT, eventData.verification(endpointId, challenge), now);
}

/** A signed `endpoint.test` for one endpoint, on demand (console or CLI); outside the eight event types. */
export function emitTestEvent(trx: Kysely<DB>, workspaceId: string, endpointId: string, now: number): Promise<EmittedEvent> {
  return emitToEndpoint(trx, workspaceId, endpointId, TEST_EVENT, eventData.test(endpointId), now);
}
