/**
 * An endpoint's content filter as a setting (the language: event-filter.ts): set or cleared
 * from the console, the CLI and the internal API, recorded in the audit trail, and tried against
 * one of the workspace's recent events before or after saving it.
 */
import { recordAudit } from '../../audit/audit.js';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Database } from '../../store/database.js';
import { compileFilter, parseFilter } from '../events/event-filter.js';
import { type EndpointView, toView } from './endpoints.js';

/** What this file takes of the services built at start (services.ts). */
export interface EndpointFilterServices {
  database: Database;
  clock: Clock;
}

/** How many recent events the console offers to test a filter against. */
export const RECENT_EVENTS_OFFERED = 20;

const notFound = (workspaceId: string, id: string) =>
  new AppError('not_found', `no webhook endpoint ${id} in workspace ${workspaceId}; list them with: wsops endpoint list`);

/**
 * Sets (a filter: JSON text or a parsed object) or clears (null or empty text) an endpoint's
 * filter; the fan-out reads it with the endpoints, so it applies to the next event raised.
 */
export async function setEndpointFilter(
  services: EndpointFilterServices,
  workspaceId: string,
  id: string,
  input: unknown,
  actor = 'cli',
): Promise<EndpointView> {
  const filter = parseFilter(input);
  const at = new Date(services.clock()).toISOString();
  return services.database.db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('webhook_endpoints')
      .set({ filter, updated_at: at })
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound(workspaceId, id);
    await recordAudit(trx, { workspaceId, at, actor, action: 'endpoint.filter_set', target: id, detail: { filter } });
    return toView(row);
  });
}

export interface RecentEvent {
  id: string;
  type: string;
  created_at: string;
}

/** The workspace's latest events of the types the endpoint subscribes to, newest first. */
export async function recentEventsFor(
  services: EndpointFilterServices,
  workspaceId: string,
  endpoint: Pick<EndpointView, 'events'>,
): Promise<RecentEvent[]> {
  return services.database.db
    .selectFrom('events')
    .select(['id', 'type', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('type', 'in', endpoint.events)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(RECENT_EVENTS_OFFERED)
    .execute();
}

export interface FilterTrial {
  event_id: string;
  event_type: string;
  matched: boolean;
  /** The path of the first clause that failed (`data.purchase_request.amount_minor.$gt`), when not matched. */
  failed_clause: string | null;
}

/**
 * Tries a filter (`input`, or the endpoint's own when undefined) against one event of the
 * workspace of a type the endpoint subscribes to. Nothing is sent or stored.
 */
export async function tryFilter(
  services: EndpointFilterServices,
  workspaceId: string,
  endpoint: Pick<EndpointView, 'events' | 'filter'>,
  eventId: string,
  input?: unknown,
): Promise<FilterTrial> {
  const text = input === undefined ? (endpoint.filter ? JSON.stringify(endpoint.filter) : null) : parseFilter(input);
  const row = await services.database.db
    .selectFrom('events')
    .select(['id', 'type', 'body'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', eventId)
    .executeTakeFirst();
  if (!row || !endpoint.events.includes(row.type)) {
    throw new AppError(
      'invalid_parameter',
      `choose one of the recent events of a type the endpoint subscribes to (${endpoint.events.join(', ')})`,
      {
        param: 'event_id',
      },
    );
  }
  const failed = compileFilter(text)?.failure(JSON.parse(row.body)) ?? null;
  return { event_id: row.id, event_type: row.type, matched: failed === null, failed_clause: failed };
}
