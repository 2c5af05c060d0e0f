/**
 * The `webhooks` section of the OpenAPI document (3.1): one entry per event a receiver can
 * get, derived from the event catalogue. Record members refer to the same component schemas
 * as the read API (`#/components/schemas/Asset/properties/asset_tag`), so a field's type is
 * described once.
 */
import type { JsonSchema } from '../registers/fields.js';
import { ATTEMPT_TIMEOUT_MS } from '../webhooks/destinations/send.js';
import { ALL_EVENTS, type DataPart } from '../webhooks/events/event-types.js';
import { ATTEMPT_DELAYS_MS, FAILURES_BEFORE_DISABLE, MAX_ATTEMPTS } from '../webhooks/queue/schedule.js';
import { DEFAULT_TOLERANCE_SECONDS } from '../webhooks/signing/signature.js';

const propertyRef = (resource: string, field: string) => ({ $ref: `#/components/schemas/${resource}/properties/${field}` });

function partSchema(part: DataPart): JsonSchema {
  switch (part.kind) {
    case 'record':
      return {
        type: 'object',
        description: `${part.description} The fields named here exactly, as \`GET /api/v1/${part.register.path}/{id}\` returns them.`,
        additionalProperties: false,
        required: [...part.fields],
        properties: Object.fromEntries(part.fields.map((name) => [name, propertyRef(part.register.resource, name)])),
      };
    case 'field':
      return { ...propertyRef(part.register.resource, part.field), description: part.description };
    case 'own':
      return { ...part.schema, description: part.description };
  }
}

/** Component name of an event's body schema: `asset.assigned` → `AssetAssignedEvent`. */
/**
 * The Standard Webhooks headers (https://www.standardwebhooks.com), present only when the
 * endpoint is set to carry them (console, `wsops endpoint signatures`); X-Service-Signature is
 * sent either way.
 */
const STANDARD_WEBHOOKS_HEADERS = [
  {
    name: 'webhook-id',
    in: 'header',
    required: false,
    description: 'Standard Webhooks, when the endpoint carries them: the event id, the same on every retry (the idempotency key).',
    schema: { type: 'string', pattern: '^evt_[A-Za-z0-9]{1,40}$' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: false,
    description: 'Standard Webhooks: unix seconds of this attempt (the `t` of X-Service-Signature).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: false,
    description:
      "Standard Webhooks: `v1,<base64>` per signing secret, space-separated (two during a rotation's grace period, new first): base64 HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the base64-decoded part of the endpoint's `whsec_` secret after the prefix. Pass the secret as it is to `new Webhook(secret)` of a `standardwebhooks` library.",
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$' },
  },
] as const;

export function eventSchemaName(type: string): string {
  return `${type
    .split(/[._]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('')}Event`;
}

const minutes = (ms: number) => (ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`);
const SCHEDULE = ATTEMPT_DELAYS_MS.map(minutes).join(', ');

/** Adds each event's body schema to `schemas` and returns the `webhooks` object. */
export function buildWebhooks(schemas: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const webhooks: Record<string, JsonSchema> = {};
  for (const [type, declaration] of Object.entries(ALL_EVENTS)) {
    const name = eventSchemaName(type);
    const members = Object.keys(declaration.data);
    schemas[name] = {
      type: 'object',
      description: `Body of a \`${type}\` delivery.`,
      additionalProperties: false,
      required: ['id', 'type', 'created', 'api_version', 'data'],
      properties: {
        id: {
          type: 'string',
          pattern: '^evt_[A-Za-z0-9]{1,40}$',
          description: 'Event id: the same on every retry. Use it as the idempotency key.',
        },
        type: { type: 'string', const: type },
        created: { type: 'string', format: 'date-time', description: 'When the event was created (UTC).' },
        api_version: { type: 'string', const: '1', description: 'Version of the data shape.' },
        data: {
          type: 'object',
          additionalProperties: false,
          required: members.filter((m) => !declaration.optional?.includes(m)),
          properties: Object.fromEntries(Object.entries(declaration.data).map(([member, part]) => [member, partSchema(part)])),
        },
      },
    };
    const scope = declaration.scope;
    webhooks[type] = {
      post: {
        operationId: `receive${name}`,
        summary: type,
        description: `${declaration.description}\n\n${
          scope
            ? `Sent to every active endpoint that subscribed to \`${type}\` and whose scopes include \`${scope}\` (held for one disabled for failures, and sent once it is switched on again). Also listed by \`GET /api/v1/events\`.`
            : 'Sent to one endpoint; no subscription or scope is needed.'
        } Verify \`X-Service-Signature\` over the raw body before parsing it; an endpoint set to also carry the Standard Webhooks headers (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`) can instead be verified with any \`standardwebhooks\` library and the endpoint's secret as the console shows it.`,
        tags: ['webhooks'],
        ...(scope ? { 'x-wsops-scope': scope } : {}),
        security: [],
        parameters: [
          {
            name: 'X-Service-Event',
            in: 'header',
            required: true,
            description: 'The event type.',
            schema: { type: 'string', const: type },
          },
          {
            name: 'X-Service-Delivery',
            in: 'header',
            required: true,
            description: 'Identifier of this delivery attempt (a retry has a new one; the event id stays).',
            schema: { type: 'string', pattern: '^dlv_[A-Za-z0-9]{1,40}$' },
          },
          {
            name: 'X-Service-Signature',
            in: 'header',
            required: true,
            description: `\`t=<unix_seconds>,v1=<hex>\`: lowercase hex HMAC-SHA256, keyed with the endpoint's signing secret, over \`<t>.\` followed by the raw body. During a secret rotation's grace period a second \`v1\` (old secret) is present; accept if any matches (constant-time). Reject when |now − t| > ${DEFAULT_TOLERANCE_SECONDS} s.`,
            schema: { type: 'string', pattern: '^t=[0-9]+(,v1=[0-9a-f]{64})+$' },
          },
          ...STANDARD_WEBHOOKS_HEADERS,
        ],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } },
        responses: {
          '2XX': {
            description: `Received. Answer within ${ATTEMPT_TIMEOUT_MS / 1000} s; the response body is ignored (a snippet is kept in the delivery history).`,
          },
          default: {
            description: `Any other status, a timeout (${ATTEMPT_TIMEOUT_MS / 1000} s), a redirect (never followed) or a TLS error is a failure. Delays before each of the ${MAX_ATTEMPTS} attempts: ${SCHEDULE}. After ${FAILURES_BEFORE_DISABLE} failed deliveries in a row the endpoint is disabled; nothing is lost.`,
          },
        },
      },
    };
  }
  return webhooks;
}
