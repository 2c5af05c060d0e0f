/**
 * The OpenAPI 3.1 document of the internal listener (served at /internal/openapi.json, committed
 * as openapi-internal.json): the record writes, import and export derived from the same register
 * declarations as the public document, the domain actions from their definitions
 * (internal-openapi-actions.ts), and the operations routes (internal-openapi-operations.ts).
 * The public document stays /api/v1 only.
 */
import { ERRORS_PAGE_PATH } from '../errors.js';
import { NDJSON_TYPE } from '../media-types.js';
import { REGISTERS } from '../registers/catalogue.js';
import { ID_PATTERN_BODY, type JsonSchema } from '../registers/fields.js';
import { FIELD_PROBLEM_CODES, patchSchemaOf, writeSchemaOf } from '../registers/record-input.js';
import { adapterOf } from '../store/database.js';
import { MAX_FILTER_BYTES, MAX_FILTER_DEPTH } from '../webhooks/events/event-filter.js';
import { EXPORT_ORDER } from '../writes/export.js';
import { ATOMIC_MAX_LINES, MAX_LINE_BYTES, MAX_REPORTED_REFUSALS } from '../writes/import.js';
import { REFERRER_IDS_LISTED } from '../writes/referrers.js';
import { actionPaths, actionSchemas } from './internal-openapi-actions.js';
import { operationsPaths, operationsSchemas } from './internal-openapi-operations.js';
import { INTERNAL_RESPONSES, only, schemaRef as ref, WITH_JSON_BODY, WITH_PATH } from './internal-openapi-responses.js';
import { problemSchema } from './openapi.js';

const aOrAn = (noun: string) => `${/^[AEIOU]/.test(noun) ? 'an' : 'a'} ${noun}`;
const record = (r: (typeof REGISTERS)[number], description: string) => ({
  description,
  headers: { ETag: { $ref: '#/components/headers/ETag' }, 'Request-Id': { $ref: '#/components/headers/Request-Id' } },
  content: { 'application/json': { schema: ref(r.resource) } },
});

export function buildInternalOpenApi(baseUrl: string): JsonSchema {
  const schemas: Record<string, JsonSchema> = {};
  const paths: Record<string, JsonSchema> = {};
  for (const r of REGISTERS) {
    schemas[r.resource] = r.recordSchema();
    schemas[`${r.resource}Write`] = writeSchemaOf(r);
    schemas[`${r.resource}Patch`] = patchSchemaOf(r);
    const id = {
      name: 'id',
      in: 'path',
      required: true,
      schema: { type: 'string', pattern: `^${r.idPrefix}_${ID_PATTERN_BODY}$` },
      description: `The caller's id: \`${r.idPrefix}_\` followed by the source system's own identifier.`,
    };
    const params = [{ $ref: '#/components/parameters/workspace_id' }, id];
    const body = (type: string, schema: JsonSchema) => ({ required: true, content: { [type]: { schema } } });
    const written = { ...WITH_JSON_BODY, '412': only('PreconditionFailed'), '422': only('InvalidRecord') };
    paths[`/internal/v1/workspaces/{workspace_id}/${r.path}/{id}`] = {
      parameters: params,
      get: {
        operationId: `get${r.resource}`,
        tags: [r.path],
        summary: `Read one ${r.resource} with its ETag`,
        description:
          'The record as stored, the same object as /api/v1 returns, with its ETag (send it back as If-Match to write only over this version).',
        responses: { '200': record(r, 'The stored record.'), ...WITH_PATH },
      },
      put: {
        operationId: `put${r.resource}`,
        tags: [r.path],
        summary: `Create or replace ${aOrAn(r.resource)}`,
        description:
          'A direct write: moves `updated_at`, emits no event. The body is the record as /api/v1 returns it; `created_at` and `updated_at` are stamped by wsops (ignored when sent), derived fields are computed (a different value is a 422), nullable fields default to null and lists to empty. An identical record changes nothing (`updated_at` stays).',
        parameters: [{ $ref: '#/components/parameters/If-Match' }, { $ref: '#/components/parameters/If-None-Match' }],
        requestBody: body('application/json', ref(`${r.resource}Write`)),
        responses: {
          '200': record(r, 'Replaced (or unchanged).'),
          '201': record(r, 'Created.'),
          ...written,
        },
      },
      patch: {
        operationId: `patch${r.resource}`,
        tags: [r.path],
        summary: `Change fields of ${aOrAn(r.resource)} (JSON merge patch, RFC 7396)`,
        description:
          'Members replace, `null` removes (a nullable field becomes null, a list empty, a derived field is computed again; a field without a default is a 422), arrays replace whole. Every field is optional; `created_at` and `updated_at` are stamped by wsops. `application/json` is accepted too.',
        parameters: [{ $ref: '#/components/parameters/If-Match' }],
        requestBody: {
          required: true,
          content: {
            'application/merge-patch+json': { schema: ref(`${r.resource}Patch`) },
            'application/json': { schema: ref(`${r.resource}Patch`) },
          },
        },
        responses: { '200': record(r, 'The changed record.'), ...written },
      },
      delete: {
        operationId: `delete${r.resource}`,
        tags: [r.path],
        summary: `Delete ${aOrAn(r.resource)}`,
        description:
          'The record leaves every list and detail; no event. A record that other records still name (every `*_id` and `*_ids` field of a register, nested items included, that names a register) is not deleted: 409 `referenced` with `referrers`. Point those records elsewhere or delete them first.',
        parameters: [{ $ref: '#/components/parameters/If-Match' }],
        responses: {
          '204': { description: 'Deleted.', headers: { 'Request-Id': { $ref: '#/components/headers/Request-Id' } } },
          ...WITH_PATH,
          '409': only('Referenced'),
          '412': only('PreconditionFailed'),
        },
      },
    };
  }
  schemas.ImportLine = {
    description: 'One line of an import: an upsert of a whole record (as PUT takes it) or a delete by id.',
    oneOf: [
      {
        type: 'object',
        additionalProperties: false,
        required: ['register', 'op', 'record'],
        properties: { register: { enum: [...EXPORT_ORDER] }, op: { const: 'upsert' }, record: { type: 'object' } },
      },
      {
        type: 'object',
        additionalProperties: false,
        required: ['register', 'op', 'id'],
        properties: { register: { enum: [...EXPORT_ORDER] }, op: { const: 'delete' }, id: { type: 'string' } },
      },
    ],
  };
  const counts = (names: string[]) => ({
    type: 'object',
    additionalProperties: false,
    required: names,
    properties: Object.fromEntries(names.map((n) => [n, { type: 'integer' }])),
  });
  schemas.ImportReport = {
    type: 'object',
    additionalProperties: false,
    required: [
      'id',
      'workspace_id',
      'dry_run',
      'atomic',
      'keep_timestamps',
      'committed',
      'lines',
      'counts',
      'refused_count',
      'refused',
      'refused_truncated',
      'repeated_count',
      'repeated',
      'started_at',
      'finished_at',
    ],
    properties: {
      id: { type: 'string', pattern: '^imp_' },
      workspace_id: { type: 'string' },
      dry_run: { type: 'boolean' },
      atomic: { type: 'boolean' },
      keep_timestamps: { type: 'boolean' },
      committed: {
        type: 'boolean',
        description: 'False for a dry run, and for an atomic import with a refused line (then nothing was written).',
      },
      lines: {
        type: 'integer',
        description:
          "How many lines held an operation, refused ones included. Blank lines, and a CSV file's header row, are not counted; `refused[].line` is still the line's (or the CSV row's) number in the file.",
      },
      counts: {
        type: 'object',
        description: 'Per register: what each line did. A line superseded by a later line for the same id counts as unchanged.',
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          required: ['upsert', 'delete', 'refused'],
          properties: {
            upsert: counts(['created', 'updated', 'unchanged']),
            delete: counts(['deleted', 'absent']),
            refused: { type: 'integer' },
          },
        },
      },
      refused_count: { type: 'integer', description: 'How many lines were refused.' },
      refused: {
        type: 'array',
        description:
          'Why lines were refused, one entry per fault: a line with two faults (a missing field and an unknown one) has two entries with its line number. The first 1,000 entries are listed; every refused line is counted in refused_count.',
        items: ref('RefusedLine'),
      },
      refused_truncated: { type: 'boolean', description: 'Whether faults were left out of refused (over 1,000).' },
      repeated_count: { type: 'integer', description: 'How many upsert lines wrote an id an earlier line of the same import wrote.' },
      repeated: {
        type: 'array',
        description: `Upsert lines of an id written before in the same import, with both line numbers. They are applied: the last line for an id wins. The first ${MAX_REPORTED_REFUSALS} are listed.`,
        items: ref('RepeatedId'),
      },
      started_at: { type: 'string', format: 'date-time' },
      finished_at: { type: 'string', format: 'date-time' },
    },
  };
  const fieldCode = {
    type: 'string',
    enum: Object.keys(FIELD_PROBLEM_CODES),
    description: Object.entries(FIELD_PROBLEM_CODES)
      .map(([c, d]) => `\`${c}\`: ${d}`)
      .join('\n'),
  };
  schemas.RefusedLine = {
    type: 'object',
    additionalProperties: false,
    required: ['line', 'pointer', 'code', 'detail'],
    properties: {
      line: { type: 'integer', minimum: 1 },
      pointer: { type: 'string', description: 'JSON pointer into the line (`/record/manager_id`); empty for the whole line.' },
      code: fieldCode,
      detail: { type: 'string' },
      referrers: { type: 'array', items: ref('Referrers'), description: 'A refused delete (`referenced`): who still names the record.' },
    },
  };
  schemas.Referrers = {
    type: 'object',
    additionalProperties: false,
    required: ['register', 'field', 'count', 'ids'],
    description: 'Records that still name a record, in one register and field.',
    properties: {
      register: { type: 'string' },
      field: {
        type: 'string',
        description: 'The reference field: `manager_id`, `approvers[].person_id` (an item of a list), `person_ids`.',
      },
      count: { type: 'integer', minimum: 1 },
      ids: {
        type: 'array',
        maxItems: REFERRER_IDS_LISTED,
        items: { type: 'string' },
        description: `The first ${REFERRER_IDS_LISTED} ids, sorted.`,
      },
    },
  };
  schemas.RepeatedId = {
    type: 'object',
    additionalProperties: false,
    required: ['line', 'first_line', 'register', 'id', 'detail'],
    properties: {
      line: { type: 'integer', minimum: 1 },
      first_line: { type: 'integer', minimum: 1 },
      register: { type: 'string' },
      id: { type: 'string' },
      detail: { type: 'string' },
    },
  };
  schemas.FieldProblem = {
    type: 'object',
    additionalProperties: false,
    required: ['pointer', 'code', 'detail'],
    properties: { pointer: { type: 'string' }, code: fieldCode, detail: { type: 'string' } },
  };
  schemas.Problem = problemSchema({
    pointer: { type: 'string', description: 'On a 422: the JSON pointer of the first refused field.' },
    errors: { type: 'array', items: ref('FieldProblem'), description: 'On a 422: every refused field.' },
    referrers: {
      type: 'array',
      items: ref('Referrers'),
      description: 'On a 409 `referenced`: the records that still name the one to delete.',
    },
    lines_applied: {
      type: 'integer',
      description: 'On a 503 to an import: the lines its batches had applied, in whole batches, before it stopped.',
    },
    import_id: { type: 'string', description: 'On a 503 to an import: its id (`wsops imports` lists it).' },
  });
  // OpenAPI 3.1 has no schema for each line of a line-delimited body (3.2's itemSchema); JSON
  // Schema's contentSchema names what the text holds.
  const ndjson = {
    type: 'string',
    contentMediaType: NDJSON_TYPE,
    contentSchema: ref('ImportLine'),
    description: 'One JSON `ImportLine` a line.',
  };
  paths['/internal/v1/workspaces/{workspace_id}/import'] = {
    parameters: [{ $ref: '#/components/parameters/workspace_id' }],
    post: {
      operationId: 'importRecords',
      tags: ['import and export'],
      summary: 'Import records (NDJSON, streamed)',
      description: `One operation a line (\`ImportLine\`), at most ${MAX_LINE_BYTES} bytes each. Applied in batches of ${adapterOf('sqlite').importBatchLines} lines (SQLite) or ${adapterOf('postgres').importBatchLines} (PostgreSQL), each its own short transaction; a reference may name a record written later in the same import. The same import twice changes nothing the second time. Always 200 once read: \`refused\` lists what was not applied.`,
      parameters: [
        {
          name: 'atomic',
          in: 'query',
          schema: { type: 'string', enum: ['true', 'false'] },
          description: `All or nothing, in one transaction; at most ${ATOMIC_MAX_LINES} lines (413 beyond).`,
        },
        {
          name: 'dry_run',
          in: 'query',
          schema: { type: 'string', enum: ['true', 'false'] },
          description: 'Check everything, write nothing.',
        },
        {
          name: 'keep_timestamps',
          in: 'query',
          schema: { type: 'string', enum: ['true', 'false'] },
          description:
            "Keep each record's `created_at` and `updated_at` as given (required in every record): for moving a workspace into one no client syncs yet, since records stamped before a mirror's watermark are not seen by its next `updated_since` walk.",
        },
      ],
      requestBody: {
        required: true,
        description: 'NDJSON: each line is an `ImportLine` (components/schemas/ImportLine).',
        content: { [NDJSON_TYPE]: { schema: ndjson } },
      },
      responses: {
        '200': { description: "The import's report.", content: { 'application/json': { schema: ref('ImportReport') } } },
        ...WITH_JSON_BODY,
      },
    },
  };
  paths['/internal/v1/workspaces/{workspace_id}/export'] = {
    parameters: [{ $ref: '#/components/parameters/workspace_id' }],
    get: {
      operationId: 'exportRecords',
      tags: ['import and export'],
      summary: "Export records as NDJSON upserts (the import's format)",
      description: `Registers in the order ${EXPORT_ORDER.join(', ')} (parents first), each in (updated_at, id) order. Import it with keep_timestamps=true to get byte-for-byte the same records.`,
      parameters: [
        {
          name: 'registers',
          in: 'query',
          // A comma-separated list: what OpenAPI calls a form-style array, not exploded.
          style: 'form',
          explode: false,
          schema: { type: 'array', minItems: 1, items: { type: 'string', enum: [...EXPORT_ORDER] } },
          description:
            'The registers to export, separated by commas without spaces (`registers=people,locations`); leave the parameter out for every register. Exported parents first whatever the order given; a name given twice is exported once. An empty value, an empty name (`people,,assets`) or an unknown one is a 400 `invalid_parameter`.',
        },
      ],
      responses: {
        '200': {
          description: 'NDJSON, one upsert a line (each an `ImportLine`).',
          content: { [NDJSON_TYPE]: { schema: ndjson } },
        },
        ...WITH_PATH,
      },
    },
  };
  Object.assign(paths, actionPaths(), operationsPaths());
  Object.assign(schemas, actionSchemas(), operationsSchemas());
  schemas.WebhookEndpoint = {
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
  /** The path parameters of one endpoint's operations. */
  const ENDPOINT_PATH_PARAMETERS = [
    { $ref: '#/components/parameters/workspace_id' },
    { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The endpoint id (`we_…`).' },
  ];
  schemas.RegisteredWebhookEndpoint = {
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
  };
  paths['/internal/v1/workspaces/{workspace_id}/webhook-endpoints'] = {
    parameters: [{ $ref: '#/components/parameters/workspace_id' }],
    post: {
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
    },
    get: {
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
    },
  };
  paths['/internal/v1/workspaces/{workspace_id}/webhook-endpoints/{id}/filter'] = {
    parameters: ENDPOINT_PATH_PARAMETERS,
    put: {
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
    },
  };
  paths['/internal/v1/workspaces/{workspace_id}/webhook-endpoints/{id}/signatures'] = {
    parameters: ENDPOINT_PATH_PARAMETERS,
    put: {
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
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'wsops internal API: system of record writes',
      version: '1',
      license: { name: 'MIT', identifier: 'MIT' },
      contact: { name: 'wsops operators: quote the request_id of the response', url: `${baseUrl}${ERRORS_PAGE_PATH}` },
      description:
        'Served on the internal listener (WSOPS_INTERNAL_PORT) only, with the operator token. Direct writes move `updated_at` and emit no event; state changes that have an event go through the domain actions (`POST /internal/v1/actions/{action}`). Every error is an RFC 9457 problem (`application/problem+json`) with a stable `code` and the `request_id`, as on the public API.',
    },
    tags: [
      ...REGISTERS.map((r) => ({ name: r.path, description: `Direct writes of ${r.path.replace(/-/g, ' ')}: ${r.description}` })),
      {
        name: 'import and export',
        description: "A workspace's records in bulk, as NDJSON: an export imports into another workspace unchanged.",
      },
      {
        name: 'actions',
        description: 'The domain actions: state changes that update the registers and emit their events in one transaction.',
      },
      {
        name: 'webhook endpoints',
        description:
          "A workspace's webhook endpoints and event destinations: registration, the list, the signature headers they are sent and their content filters.",
      },
      { name: 'operations', description: 'Liveness, readiness, metrics and this document; no token.' },
    ],
    // No fixed address: the listener is wherever WSOPS_INTERNAL_HOST and WSOPS_INTERNAL_PORT put it.
    servers: [
      {
        url: 'http://{host}:{port}',
        description: 'The internal listener (WSOPS_INTERNAL_HOST, WSOPS_INTERNAL_PORT); never exposed to the internet.',
        variables: { host: { default: '127.0.0.1' }, port: { default: '9090' } },
      },
    ],
    security: [{ operatorToken: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: { operatorToken: { type: 'http', scheme: 'bearer', description: 'The operator token, WSOPS_OPERATOR_TOKEN.' } },
      responses: INTERNAL_RESPONSES,
      headers: {
        'Request-Id': { description: 'Identifier of this request; quote it when reporting a problem.', schema: { type: 'string' } },
        ETag: { description: "The record's version: its updated_at, quoted. Send it back as If-Match.", schema: { type: 'string' } },
      },
      parameters: {
        workspace_id: { name: 'workspace_id', in: 'path', required: true, schema: { type: 'string', pattern: `^wsp_${ID_PATTERN_BODY}$` } },
        'If-Match': {
          name: 'If-Match',
          in: 'header',
          schema: { type: 'string' },
          description: "Write only if the record's ETag is this one (`*`: if it exists); otherwise 412.",
        },
        'If-None-Match': {
          name: 'If-None-Match',
          in: 'header',
          schema: { type: 'string', enum: ['*'] },
          description: '`*`: create only; 412 if the record exists.',
        },
      },
    },
  };
}
