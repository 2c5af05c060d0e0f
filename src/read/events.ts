/**
 * The events API (CONTRACT "Events API"): `GET /api/v1/events`, a workspace's events oldest
 * first, each exactly the body its webhook deliveries carry, and `GET /api/v1/events/{id}`. A
 * key sees the types whose read scope it holds (the rule of an endpoint's subscription);
 * `endpoint.verification` and `endpoint.test` are never served. The lists' rules apply: `limit`,
 * a signed cursor bound to the filters (`types`, `since`) and to this list, the problems. Events
 * are kept `WSOPS_EVENT_RETENTION_DAYS`; a `since` or cursor before that horizon is refused, as
 * the events from then may be pruned.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { KeyContext } from '../keys/auth.js';
import { JSON_TYPE } from '../media-types.js';
import { idPattern } from '../registers/fields.js';
import type { Database } from '../store/database.js';
import { eventBody, eventPage } from '../store/event-pages.js';
import type { CursorCodec } from './list-query.js';
import { filterDigest, type RawQuery, readCursor, readInstant, readLimit, rejectUnknown } from './list-query.js';

/** What this file takes of the services built at start (services.ts). */
export interface EventsServices {
  config: Config;
  database: Database;
  cursors: CursorCodec;
  clock: Clock;
}

const DAY_MS = 86_400_000;
export const EVENTS_PARAMS: readonly string[] = ['limit', 'cursor', 'types', 'since'];
/** The name this list's cursors are bound to: no register's list or feed takes them. */
const CURSOR_SCOPE = 'events';

/** The oldest instant the events API still answers completely, given the retention setting. */
export function eventHorizon(services: EventsServices, now: number): string {
  return new Date(now - services.config.eventRetentionDays * DAY_MS).toISOString();
}

/**
 * The listable event types, each with the read scope a key needs to see it, in the catalogue's
 * order (webhooks/events/event-types.ts; passed in by the app, http/app.ts, as read/ sits below webhooks/).
 */
export type EventScopes = Readonly<Record<string, string>>;

/** The types a key may see: those whose read scope it holds. */
export function visibleTypes(catalogue: EventScopes, ctx: KeyContext): string[] {
  return Object.keys(catalogue).filter((t) => ctx.scopes.includes(catalogue[t] as string));
}

/** `types`: comma-separated event types, each known; undefined when absent (every type). */
function readTypes(catalogue: EventScopes, query: RawQuery): string[] | undefined {
  const raw = query.types;
  if (raw === undefined) return undefined;
  if (Array.isArray(raw) || raw.length === 0) {
    throw new AppError('invalid_parameter', 'types must be given once, as comma-separated event types', { param: 'types' });
  }
  const types = [...new Set(raw.split(','))].sort();
  for (const t of types) {
    if (!Object.hasOwn(catalogue, t)) {
      throw new AppError(
        'invalid_parameter',
        `types holds "${t.slice(0, 60)}", which is not an event type; the event types are: ${Object.keys(catalogue).join(', ')}`,
        { param: 'types' },
      );
    }
  }
  return types;
}

export function eventsListHandler(
  services: EventsServices,
  catalogue: EventScopes,
  admit: (request: FastifyRequest, reply: FastifyReply) => Promise<KeyContext>,
) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const ctx = await admit(request, reply);
    const query = request.query as RawQuery;
    rejectUnknown(query, EVENTS_PARAMS);
    const limit = readLimit(query);
    const asked = readTypes(catalogue, query);
    const since = readInstant(query, 'since');
    const cursor = readCursor(query);
    const now = services.clock();
    const digest = filterDigest({ types: asked?.join(','), since });
    const after = cursor
      ? services.cursors.decode(cursor, {
          workspaceId: ctx.workspaceId,
          register: CURSOR_SCOPE,
          digest,
          now,
          resumeWith: 'types and since',
        })
      : undefined;
    // Checked on every page: a walk's `since` and position come back with each cursor, and a
    // walk that falls behind the horizon while it pages may already have lost events to pruning.
    const horizon = eventHorizon(services, now);
    const from = after?.updatedAt ?? since;
    if (from !== undefined && from < horizon) {
      throw new AppError(
        'events_beyond_retention',
        `${after ? "the cursor's position" : `since ${since}`} is before the events API's retention horizon ${horizon} (events are kept ${services.config.eventRetentionDays} days), so events from then may be missing: reconcile from the registers, then list events with a since inside the retention`,
        { param: after ? 'cursor' : 'since' },
      );
    }
    const visible = visibleTypes(catalogue, ctx);
    const types = asked ? asked.filter((t) => visible.includes(t)) : visible;
    if (types.length === 0) return reply.type(JSON_TYPE).send('{"data":[],"has_more":false,"next_cursor":null}');
    const page = await eventPage(services.database, {
      workspaceId: ctx.workspaceId,
      types,
      since,
      notBefore: horizon,
      after: after && { createdAt: after.updatedAt, id: after.id },
      limit,
    });
    const nextCursor = page.next
      ? services.cursors.encode({
          workspaceId: ctx.workspaceId,
          register: CURSOR_SCOPE,
          position: { updatedAt: page.next.createdAt, id: page.next.id },
          digest,
          issuedAt: now,
        })
      : null;
    // The stored bodies as they are: exactly what the deliveries carried.
    return reply
      .type(JSON_TYPE)
      .send(`{"data":[${page.bodies.join(',')}],"has_more":${page.next !== undefined},"next_cursor":${JSON.stringify(nextCursor)}}`);
  };
}

export function eventDetailHandler(
  services: EventsServices,
  catalogue: EventScopes,
  admit: (request: FastifyRequest, reply: FastifyReply) => Promise<KeyContext>,
) {
  return async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const ctx = await admit(request, reply);
    rejectUnknown(request.query as RawQuery, []);
    const id = request.params.id;
    const notFound = new AppError('not_found', `No event with id "${id.slice(0, 60)}" in this workspace that this key may see.`);
    const types = visibleTypes(catalogue, ctx);
    // An id of another shape is simply not found, before any query (as a register's detail).
    if (!idPattern('evt').test(id) || types.length === 0) throw notFound;
    const body = await eventBody(services.database.db, {
      workspaceId: ctx.workspaceId,
      id,
      types,
      notBefore: eventHorizon(services, services.clock()),
    });
    if (body === undefined) throw notFound;
    return reply.type(JSON_TYPE).send(body);
  };
}
