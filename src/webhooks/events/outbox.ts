/**
 * The transactional outbox: an event is written in the same transaction as the register change
 * that causes it, together with one delivery job per endpoint that should receive it. A change
 * never commits without its event, and no event exists for a change that rolled back.
 */
import { type Kysely, sql } from '#kysely';
import { newId } from '../../ids.js';
import { HOLDS_EVENTS, RECEIVES_EVENTS } from '../../store/event-receivers.js';
import { insertBatches } from '../../store/insert-batches.js';
import type { DB } from '../../store/schema.js';
import { type CompiledFilter, compileFilter } from './event-filter.js';
import { EVENT_TYPES, type EventType, eventData, TEST_EVENT, VERIFICATION_EVENT } from './event-types.js';

export interface EmittedEvent {
  id: string;
  type: string;
  /** Delivery jobs created (one per receiving endpoint, pending or held). */
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
  endpoints: readonly { id: string; held: boolean }[],
  at: string,
): DB['delivery_jobs'][] {
  return endpoints.map((endpoint) => ({
    id: newId('job'),
    workspace_id: workspaceId,
    event_id: eventId,
    endpoint_id: endpoint.id,
    event_type: eventType,
    state: endpoint.held ? ('held' as const) : ('pending' as const),
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

/** What the fan-out reads of an endpoint that receives events. */
export interface Receiver {
  id: string;
  events: string;
  scopes: string;
  /** Its jobs are written `held` (kept for it, sent once it is active again), not `pending`. */
  held: boolean;
  /** Its content filter, compiled once per read of the endpoints (event-filter.ts); null: every event. */
  filter: CompiledFilter | null;
}

/** The endpoints of a workspace that receive its events (RECEIVES_EVENTS), as the fan-out reads them. */
export async function receivingEndpoints(trx: Kysely<DB>, workspaceId: string): Promise<Receiver[]> {
  const { rows } = await sql<{
    id: string;
    events: string;
    scopes: string;
    held: number;
    filter: string | null;
  }>`SELECT e.id, e.events, e.scopes,
    e.filter, ${sql.raw(HOLDS_EVENTS)} AS held FROM webhook_endpoints e WHERE e.workspace_id = ${workspaceId} AND ${sql.raw(RECEIVES_EVENTS)}`.execute(
    trx,
  );
  return rows.map((r) => ({ id: r.id, events: r.events, scopes: r.scopes, held: Number(r.held) === 1, filter: compileFilter(r.filter) }));
}

/** A domain event's row, not yet written (its id is known from here on). */
export function newEvent(workspaceId: string, type: EventType, data: unknown, now: number): DB['events'] {
  return eventRow(workspaceId, type, data, new Date(now).toISOString());
}

/**
 * The delivery jobs of `events`: one per event and receiving endpoint that subscribed to its
 * type, whose scopes cover it and whose filter, if any, the event's body matches; `held` for an
 * endpoint that is not active (RECEIVES_EVENTS). An event a filter leaves out gets no job for
 * that endpoint: never sent, never a failure.
 */
export function fanOut(endpoints: readonly Receiver[], events: readonly DB['events'][]): DB['delivery_jobs'][] {
  const jobs: DB['delivery_jobs'][] = [];
  for (const e of events) {
    const scope = EVENT_TYPES[e.type as EventType].scope;
    // The body is parsed only when an endpoint filters, and once for all of them.
    let body: unknown;
    const matches = (filter: CompiledFilter | null) => {
      if (filter === null) return true;
      body ??= JSON.parse(e.body);
      return filter.failure(body) === undefined;
    };
    const receivers = endpoints.filter(
      (ep) => ep.events.split(' ').includes(e.type) && ep.scopes.split(' ').includes(scope) && matches(ep.filter),
    );
    jobs.push(...jobRows(e.workspace_id, e.id, e.type, receivers, e.created_at));
  }
  return jobs;
}

/**
 * Emits domain events inside the caller's transaction, each fanned out to every receiving
 * endpoint (RECEIVES_EVENTS) that subscribed to it and whose scopes cover it. Several events of one transaction
 * share one endpoint lookup and one insert per table.
 */
export async function emitEvents(
  trx: Kysely<DB>,
  workspaceId: string,
  events: readonly PendingEvent[],
  now: number,
): Promise<EmittedEvent[]> {
  if (events.length === 0) return [];
  const endpoints = await receivingEndpoints(trx, workspaceId);
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
  await insertBatches(trx, 'delivery_jobs', jobRows(workspaceId, row.id, type, [{ id: endpointId, held: false }], row.created_at));
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
