/**
 * The events API (`GET /api/v1/events`): `list` (every event since an instant, across pages,
 * oldest first, as an async iterable), `listPage` (one page) and `get`. Each event is exactly the
 * body its webhook deliveries carry, typed by its `type` (narrow on `event.type`).
 */
import type { components, operations } from './generated/openapi.js';
import type { Page } from './resource.js';
import type { Query, RequestOptions, Transport } from './transport.js';

/** Any event a key may list: a union over the event types, discriminated by `type`. */
export type Event = components['schemas']['Event'];
/** The event types (`asset.assigned`, …). */
export type EventType = Event['type'];

export interface EventsParams {
  /** Only these types (all the key may see, without it). */
  types?: readonly EventType[];
  /** Only events created at or after this instant (RFC 3339, or a Date). */
  since?: string | Date;
  limit?: number;
  cursor?: string;
}

type ServedQuery = NonNullable<operations['listEvents']['parameters']['query']>;

function toQuery(params: EventsParams): Query {
  const query: ServedQuery = {};
  if (params.types !== undefined) query.types = params.types.join(',');
  if (params.since !== undefined) query.since = params.since instanceof Date ? params.since.toISOString() : params.since;
  if (params.limit !== undefined) query.limit = params.limit;
  if (params.cursor !== undefined) query.cursor = params.cursor;
  return query as Query;
}

export class EventsResource {
  constructor(private readonly transport: Transport) {}

  /** One page. Pass the previous page's `next_cursor` as `cursor`, with the same `types` and `since`. */
  listPage(params: EventsParams = {}, options: RequestOptions = {}): Promise<Page<Event>> {
    return this.transport.get<Page<Event>>('/api/v1/events', toQuery(params), options);
  }

  /**
   * Every event of `types` created at or after `since`, across pages, oldest first. Pages are
   * fetched as the caller iterates; stopping early fetches nothing more. A `since` before the
   * retention horizon is an InvalidRequestError with code `events_beyond_retention`. To catch up
   * after an outage, list from the last event applied (less a few minutes) and skip the ids
   * already applied: the event id is the idempotency key.
   */
  async *list(params: Omit<EventsParams, 'cursor'> = {}, options: RequestOptions = {}): AsyncGenerator<Event, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listPage({ ...params, ...(cursor ? { cursor } : {}) }, options);
      yield* page.data;
      cursor = page.has_more && page.next_cursor ? page.next_cursor : undefined;
    } while (cursor);
  }

  /** One event by id; a NotFoundError when the key may not see it (or it is unknown, or pruned). */
  get(id: string, options: RequestOptions = {}): Promise<Event> {
    return this.transport.get<Event>(`/api/v1/events/${encodeURIComponent(id)}`, {}, options);
  }
}
