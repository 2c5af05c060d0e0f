/**
 * Webhook endpoints in the internal document: the endpoint as the console shows it, and the
 * registration, list, filter and signature operations the CLI and the console also offer.
 */
import type { JsonSchema } from '../registers/fields.js';
import { MAX_FILTER_BYTES, MAX_FILTER_DEPTH } from '../webhooks/events/event-filter.js';
import { only, schemaRef as ref, WITH_JSON_BODY, WITH_PATH } from './internal-openapi-responses.js';

export function endpointSchemas(): Record<string, JsonSchema> {
  return {
    WebhookEndpoint: webhookEndpointSchema(),
    RegisteredWebhookEndpoint: {
      allOf: [
        ref('WebhookEndpoint'),
        {
          type: 'object',
          required: ['secret', 'verification_event_id'],
          properties: {
            secret: { type: 'string', description: 'The signing secret (`whsec_…`): shown in this answer only, never again.' },
            verification_event_id: { type: 'string', description: 'The signed `endpoint.verification` queued for the endpoint.' },
          },
        },
      ],
    },
  };
}

export function endpointPaths(): Record<string, JsonSchema> {
  return {
    '/internal/v1/workspaces/{workspace_id}/webhook-endpoints': {
      parameters: [{ $ref: '#/components/parameters/workspace_id' }],
      post: createEndpointOperation(),
      get: listEndpointsOperation(),
    },
    '/internal/v1/workspaces/{workspace_id}/webhook-endpoints/{id}/filter': {
      parameters: endpointPathParameters(),
      put: setFilterOperation(),
    },
    '/internal/v1/workspaces/{workspace_id}/webhook-endpoints/{id}/signatures': {
      parameters: endpointPathParameters(),
      put: setSignaturesOperation(),
    },
  };
}

function webhookEndpointSchema(): JsonSchema {
  return {
    type: 'object',
    description: 'A webhook endpoint as the console shows it (never its secret).',
    required: ['id', 'url', 'status', 'standard_webhooks'],
    properties: {
      id: { type: 'string' },
      url: { type: 'string' },
      scopes: { type: 'array', items: { type: 'string' } },
      events: { type: 'array', items: { type: 'string' } },
      status: { type: 'string', enum: ['unverified', 'active', 'disabled'] },
      disabled_reason: { type: ['string', 'null'], enum: ['user', 'failures', null] },
      consecutive_failures: { type: 'integer' },
      last_failure: { type: ['string', 'null'] },
      created_at: { type: 'string' },
      updated_at: { type: 'string' },
      verified_at: { type: ['string', 'null'] },
      disabled_at: { type: ['string', 'null'] },
      previous_secret_expires_at: { type: ['string', 'null'] },
      max_per_second: { type: ['integer', 'null'] },
      standard_webhooks: { type: 'boolean', description: 'Deliveries also carry the Standard Webhooks headers.' },
      // Event destinations (ADR 52).
      kind: {
        type: 'string',
        enum: ['https', 'rabbitmq', 'nats'],
        description:
          'What the URL scheme names: `https` (a webhook), `rabbitmq` (`amqps://USER@HOST:PORT/VHOST`; the password is never shown) or `nats` (`tls://HOST:PORT`, NATS JetStream).',
      },
      exchange: { type: ['string', 'null'], description: 'RabbitMQ: the exchange the events are published to.' },
      routing_key: {
        type: ['string', 'null'],
        description: 'RabbitMQ: the routing-key template; placeholders `{type}`, `{workspace}`, `{endpoint}` (default `{type}`).',
      },
      subject: {
        type: ['string', 'null'],
        description:
          'NATS JetStream: the subject template; placeholders `{type}`, `{workspace}`, `{endpoint}` (default `wsops.{workspace}.{type}`).',
      },
      filter: {
        type: ['object', 'null'],
        description:
          'The content filter: only events whose webhook body matches it are sent (docs/guide/filters.md); null: every event subscribed to.',
      },
    },
  };
}

/** The path parameters of one endpoint's operations. */
function endpointPathParameters(): JsonSchema[] {
  return [
    { $ref: '#/components/parameters/workspace_id' },
    { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The endpoint id (`we_…`).' },
  ];
}

function createEndpointOperation(): JsonSchema {
  return {
    operationId: 'createEndpoint',
    tags: ['webhook endpoints'],
    summary: 'Register a webhook endpoint or an event destination',
    description:
      'The same registration as `wsops endpoint create` and the console form. The URL scheme names the kind: `https://` (a webhook, port 443, every resolved address public), `amqps://USER:PASSWORD@HOST:PORT/VHOST` with `exchange` (RabbitMQ) or `tls://HOST:PORT` (NATS JetStream); `amqp://`, `nats://` and private addresses only where private webhooks are allowed (`WSOPS_ALLOW_PRIVATE_WEBHOOKS`). A broker password is kept encrypted and never shown again. The endpoint starts `unverified`; a signed `endpoint.verification` is queued at once. At most five endpoints that are not disabled per workspace (409 `limit_reached` beyond). Each refusal is a 400 naming the member and the rule. Recorded in the audit trail.',
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            additionalProperties: false,
            required: ['url', 'scopes', 'events'],
            properties: {
              url: { type: 'string', examples: ['https://hooks.example.com/wsops'] },
              scopes: { type: 'array', items: { type: 'string' }, examples: [['assets:read']] },
              events: { type: 'array', items: { type: 'string' }, examples: [['asset.assigned', 'asset.returned']] },
              standard_webhooks: { type: 'boolean', description: 'Also send the Standard Webhooks headers (default false).' },
              exchange: { type: 'string', description: 'RabbitMQ: the exchange (required for `amqps://`).' },
              routing_key: { type: 'string', description: 'RabbitMQ: the routing-key template (default `{type}`).' },
              subject: { type: 'string', description: 'NATS JetStream: the subject template (default `wsops.{workspace}.{type}`).' },
              filter: {
                type: ['object', 'null'],
                description: 'A content filter (docs/guide/filters.md); none: every event subscribed to.',
              },
            },
          },
        },
      },
    },
    responses: {
      '201': {
        description: 'The endpoint, with its signing secret (shown only here).',
        content: { 'application/json': { schema: ref('RegisteredWebhookEndpoint') } },
      },
      ...WITH_JSON_BODY,
      '409': only('LimitReached'),
    },
  };
}

function listEndpointsOperation(): JsonSchema {
  return {
    operationId: 'listEndpoints',
    tags: ['webhook endpoints'],
    summary: "List a workspace's webhook endpoints and event destinations",
    description: 'Every endpoint, disabled ones included, oldest first; never a secret.',
    responses: {
      '200': {
        description: 'The endpoints.',
        content: {
          'application/json': {
            schema: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('WebhookEndpoint') } } },
          },
        },
      },
      ...WITH_PATH,
    },
  };
}

function setFilterOperation(): JsonSchema {
  return {
    operationId: 'setEndpointFilter',
    tags: ['webhook endpoints'],
    summary: 'Set or clear the content filter of an endpoint',
    description: `Only events whose webhook body (\`{id, type, created, api_version, data}\`) matches the filter are sent to the endpoint; the others get no delivery (never a failure). A JSON match: nested objects match nested fields, a plain value by equality, operators \`$eq $neq $gt $gte $lt $lte $in $nin $exist\` on one field, \`$and\`/\`$or\` over whole filters; a field holding an array matches when an element does. At most ${MAX_FILTER_BYTES} bytes and ${MAX_FILTER_DEPTH} levels; keys naming \`__proto__\`, \`constructor\` or \`prototype\` are refused. An invalid filter is a 400 \`invalid_parameter\` naming the path and the problem. \`null\` clears it. Verification and test events ignore it. From the next event raised; recorded in the audit trail.`,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            additionalProperties: false,
            required: ['filter'],
            properties: {
              filter: {
                type: ['object', 'null'],
                examples: [{ data: { purchase_request: { amount_minor: { $gt: 100000 } } } }],
              },
            },
          },
        },
      },
    },
    responses: {
      '200': { description: 'The endpoint.', content: { 'application/json': { schema: ref('WebhookEndpoint') } } },
      ...WITH_JSON_BODY,
    },
  };
}

function setSignaturesOperation(): JsonSchema {
  return {
    operationId: 'setEndpointSignatures',
    tags: ['webhook endpoints'],
    summary: 'Choose the signature headers of an endpoint',
    description:
      "`X-Service-Signature` is always sent. With `standard_webhooks: true` the deliveries also carry the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`), verifiable with any `standardwebhooks` library and the endpoint's secret; from the next attempt. Recorded in the audit trail.",
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            additionalProperties: false,
            required: ['standard_webhooks'],
            properties: { standard_webhooks: { type: 'boolean' } },
          },
        },
      },
    },
    responses: {
      '200': { description: 'The endpoint.', content: { 'application/json': { schema: ref('WebhookEndpoint') } } },
      ...WITH_JSON_BODY,
    },
  };
}
