/**
 * The events API's part of the OpenAPI document (`GET /api/v1/events`, `GET /api/v1/events/{id}`):
 * an item is one of the event bodies the `webhooks` section declares (openapi-webhooks.ts), so
 * both say one shape. The catch-up rule is stated here once and in the README.
 */

import type { JsonSchema } from '../registers/fields.js';
import { EVENT_TYPES, SUBSCRIBABLE_EVENTS } from '../webhooks/events/event-types.js';
import { eventSchemaName } from './openapi-webhooks.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const VISIBILITY = `A key sees an event only if it holds the read scope its type requires (as an endpoint's subscription): ${SUBSCRIBABLE_EVENTS.map((t) => `\`${t}\` ${EVENT_TYPES[t].scope}`).join(', ')}. \`endpoint.verification\` and \`endpoint.test\` are never listed.`;

/** The catch-up rule a receiver applies after an outage. */
export const CATCH_UP_RULE =
  'After an outage, list the events since the `created` of the last one your receiver processed (less a few minutes, as a transaction may commit an event a little after its `created`) and apply those whose `id` you have not applied yet: the event id is the idempotency key, the same as on the webhook deliveries.';

export function eventsSchemas(): Record<string, JsonSchema> {
  return {
    Event: {
      description: 'An event, exactly the body its webhook deliveries carry; `type` tells which.',
      oneOf: SUBSCRIBABLE_EVENTS.map((t) => ref(eventSchemaName(t))),
      discriminator: {
        propertyName: 'type',
        mapping: Object.fromEntries(SUBSCRIBABLE_EVENTS.map((t) => [t, `#/components/schemas/${eventSchemaName(t)}`])),
      },
    },
    EventList: {
      type: 'object',
      additionalProperties: false,
      required: ['data', 'has_more', 'next_cursor'],
      properties: {
        data: { type: 'array', items: ref('Event') },
        has_more: { type: 'boolean', description: 'True when another page exists.' },
        next_cursor: {
          type: ['string', 'null'],
          description: 'Pass as `cursor` to get the next page. Null exactly when `has_more` is false.',
        },
      },
    },
  };
}

export function eventsPaths(
  instantPattern: string,
  errors: Record<string, unknown>,
  headers: Record<string, unknown>,
  notFound: unknown,
): Record<string, JsonSchema> {
  return {
    '/api/v1/events': {
      get: {
        operationId: 'listEvents',
        summary: 'List events',
        description: `The workspace's events, oldest first (ascending \`(created, id)\`), each exactly the body its webhook deliveries carry. ${VISIBILITY} The lists' rules: \`limit\`, a signed cursor bound to \`types\` and \`since\` and to this list, unknown parameters are a 400. Events are kept \`WSOPS_EVENT_RETENTION_DAYS\` (default 30); a \`since\` before that horizon, or a cursor whose position has fallen behind it, is 400 \`events_beyond_retention\`. ${CATCH_UP_RULE}`,
        tags: ['events'],
        security: [{ bearerAuth: [] }],
        parameters: [
          { $ref: '#/components/parameters/limit' },
          { $ref: '#/components/parameters/cursor' },
          {
            name: 'types',
            in: 'query',
            required: false,
            description: `Comma-separated event types (${SUBSCRIBABLE_EVENTS.join(', ')}); only events of these types. An unknown type is a 400 naming the allowed set; a type the key may not see returns none of it. Without it: every type the key may see.`,
            schema: {
              type: 'string',
              minLength: 1,
              pattern: `^(${SUBSCRIBABLE_EVENTS.map((t) => t.replace('.', '\\.')).join('|')})(,(${SUBSCRIBABLE_EVENTS.map((t) => t.replace('.', '\\.')).join('|')}))*$`,
            },
          },
          {
            name: 'since',
            in: 'query',
            required: false,
            description:
              'RFC 3339 instant with an offset, read as `updated_since` is (the same 400s); only events with `created` at or after it. Before the retention horizon it is a 400 `events_beyond_retention`.',
            schema: { type: 'string', format: 'date-time', pattern: instantPattern },
          },
        ],
        responses: {
          '200': { description: 'A page of events.', headers, content: { 'application/json': { schema: ref('EventList') } } },
          ...errors,
        },
      },
    },
    '/api/v1/events/{id}': {
      get: {
        operationId: 'getEvent',
        summary: 'Get one event',
        description: `The same object as in the list. An unknown id, another workspace's, one older than the retention, or one of a type the key may not see is 404 \`not_found\`. ${VISIBILITY}`,
        tags: ['events'],
        security: [{ bearerAuth: [] }],
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'Event id (`evt_…`).' }],
        responses: {
          '200': { description: 'The event.', headers, content: { 'application/json': { schema: ref('Event') } } },
          ...errors,
          '404': notFound,
        },
      },
    },
  };
}
