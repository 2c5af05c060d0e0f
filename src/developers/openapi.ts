import { ERROR_CATALOGUE } from '../errors.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_SEARCH_LENGTH, MAX_SEARCH_WORDS } from '../read/list-query.js';
import { READ_SCOPES, REGISTERS } from '../registers/catalogue.js';
import type { Register } from '../registers/define.js';
import { ID_PATTERN_BODY, type JsonSchema } from '../registers/fields.js';
import { DELETIONS_SCHEMAS, deletionsPath, sinceParameter } from './openapi-deletions.js';
import { eventsPaths, eventsSchemas } from './openapi-events.js';
import { buildWebhooks } from './openapi-webhooks.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const resp = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** Answered by the HTTP layer to any request, before routing: listed on every operation. */
const TRANSPORT_ERRORS = {
  '408': resp('RequestTimeout'),
  '414': resp('UriTooLong'),
  '431': resp('HeaderFieldsTooLarge'),
};

/** `search` holds at least one letter or digit (list-query.ts: searchWords finds a word). */
export const SEARCH_PATTERN = '[\\p{L}\\p{N}]';

/**
 * An instant as parseInstant (timestamp.ts) reads it: a date, a time and an offset; month 01-12,
 * day 01-31, hour 00-23, minute and second 00-59 (no leap second), offset at most 23:59; year
 * 0001 or later. The ranges are in the pattern, not left to `format: date-time`, for the tools
 * that skip formats. Refusals this cannot express (a calendar date that does not exist, an
 * offset that moves the instant out of years 1..9999) are in the descriptions (INSTANT_EDGES).
 */
export const INSTANT_PATTERN =
  '^(?!0000)\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])[Tt ]([01]\\d|2[0-3]):[0-5]\\d(:[0-5]\\d([.,]\\d{1,9})?)?([Zz]|[+-]([01]\\d|2[0-3])(:?[0-5]\\d)?)$';

/** What the server refuses of an instant that INSTANT_PATTERN admits, in words for the descriptions. */
export const INSTANT_EDGES =
  'Refused with a 400: a date that does not exist (`2026-02-30`), and an instant before 0001-01-01T00:00:00Z or after 9999-12-31T23:59:59.999Z once the offset is applied (`0001-01-01T00:00:00+01:00`).';

const commonHeaders = {
  'Request-Id': { $ref: '#/components/headers/Request-Id' },
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
};

function problemResponse(description: string, extraHeaders: Record<string, unknown> = {}) {
  return {
    description,
    headers: { 'Request-Id': { $ref: '#/components/headers/Request-Id' }, ...extraHeaders },
    content: { 'application/problem+json': { schema: ref('Problem') } },
  };
}

/** RFC 9457 problem details as every wsops listener answers them, with the listener's own extra members. */
export function problemSchema(extra: Record<string, JsonSchema>): JsonSchema {
  return {
    type: 'object',
    description: 'RFC 9457 problem details.',
    required: ['type', 'title', 'status', 'detail', 'code', 'request_id'],
    properties: {
      type: { type: 'string', format: 'uri' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string', description: 'What was wrong and how to fix it.' },
      code: { type: 'string', enum: Object.keys(ERROR_CATALOGUE), description: 'Stable, machine-readable code.' },
      request_id: { type: 'string' },
      param: { type: 'string', description: 'On a 400 about one parameter: its name.' },
      ...extra,
    },
  };
}

/** What any read of /api/v1 can meet. */
const readErrors = () => ({
  '400': resp('BadRequest'),
  '401': resp('Unauthorized'),
  '403': resp('Forbidden'),
  '429': resp('TooManyRequests'),
  ...TRANSPORT_ERRORS,
});

/** The OpenAPI 3.1 document of /api/v1, derived from the register declarations. */
export function buildOpenApi(baseUrl: string): JsonSchema {
  const schemas: Record<string, JsonSchema> = {
    ...registerSchemas(),
    ...DELETIONS_SCHEMAS,
    Scopes: scopesSchema(),
    Problem: problemSchema({
      missing_scope: { type: 'string', description: 'On a 403: the scope the key lacks.' },
      key_id: { type: 'string', description: 'On a 429: the key that was limited.' },
    }),
  };
  const webhooks = buildWebhooks(schemas);
  // The events API serves the bodies the webhooks declare (openapi-events.ts).
  Object.assign(schemas, eventsSchemas());
  const paths = {
    ...registerPaths(),
    '/api/v1/scopes': scopesPath(),
    ...eventsPaths(INSTANT_PATTERN, readErrors(), commonHeaders, resp('NotFound')),
  };
  return {
    openapi: '3.1.0',
    info: documentInfo(baseUrl),
    servers: [{ url: baseUrl }],
    security: [{ bearerAuth: [] }],
    tags: documentTags(),
    paths,
    webhooks,
    components: components(schemas),
  };
}

/** Per register: the record and a page of the list. */
function registerSchemas(): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {};
  for (const r of REGISTERS) {
    schemas[r.resource] = r.recordSchema();
    schemas[`${r.resource}List`] = listSchema(r);
  }
  return schemas;
}

/** Per register: its list, its deletions feed and one record. */
function registerPaths(): Record<string, JsonSchema> {
  const paths: Record<string, JsonSchema> = {};
  for (const r of REGISTERS) {
    const errors = readErrors();
    paths[`/api/v1/${r.path}`] = { get: listOperation(r, errors) };
    paths[`/api/v1/${r.path}/deletions`] = deletionsPath(r, errors);
    paths[`/api/v1/${r.path}/{id}`] = { get: recordOperation(r, errors) };
  }
  return paths;
}

function listSchema(r: Register): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['data', 'has_more', 'next_cursor'],
    properties: {
      data: { type: 'array', items: ref(r.resource) },
      has_more: { type: 'boolean', description: 'True when another page exists.' },
      next_cursor: {
        type: ['string', 'null'],
        description: 'Pass as `cursor` to get the next page. Null exactly when `has_more` is false.',
      },
    },
  };
}

/** Paging, sync, search (when the register has it) and the register's filters. */
function listParameters(r: Register): JsonSchema[] {
  const filterParams = r.filters.map((name) => {
    const field = r.fields[name];
    const schema = field?.values
      ? { type: 'string', enum: [...field.values] }
      : { type: 'string', pattern: `^${field?.ref}_${ID_PATTERN_BODY}$` };
    return {
      name,
      in: 'query',
      required: false,
      description: `Exact match on \`${name}\`. A value outside the accepted set is a 400.`,
      schema,
    };
  });
  return [
    { $ref: '#/components/parameters/limit' },
    { $ref: '#/components/parameters/cursor' },
    { $ref: '#/components/parameters/updated_since' },
    ...(r.search.length
      ? [
          {
            name: 'search',
            in: 'query',
            required: false,
            description: `Case-insensitive text search over ${r.search.map((s) => `\`${s}\``).join(', ')}: every word must match a word or word prefix. Words are the runs of letters and digits (accents ignored); the value must hold at least one letter or digit (\`__\` is a 400) and at most ${MAX_SEARCH_WORDS} distinct words.`,
            schema: { type: 'string', minLength: 1, maxLength: MAX_SEARCH_LENGTH, pattern: SEARCH_PATTERN },
          },
        ]
      : []),
    ...filterParams,
  ];
}

function listOperation(r: Register, errors: Record<string, unknown>): JsonSchema {
  return {
    operationId: `list${r.resource}s`.replace(/ys$/, 'ies').replace(/ss$/, 'sses'),
    summary: `List ${r.path.replace(/-/g, ' ')}`,
    description: `${r.description}\n\nOrdered by ascending \`(updated_at, id)\`, the paging and sync order. Requires \`${r.scope}\`. ${
      r.search.length ? '' : 'This register does not support `search` (400). '
    }When the \`${r.module}\` module is not installed the list is empty.`,
    tags: [r.path],
    security: [{ bearerAuth: [r.scope] }],
    parameters: listParameters(r),
    responses: {
      '200': {
        description: 'A page of records.',
        headers: commonHeaders,
        content: { 'application/json': { schema: ref(`${r.resource}List`) } },
      },
      ...errors,
    },
  };
}

function recordOperation(r: Register, errors: Record<string, unknown>): JsonSchema {
  return {
    operationId: `get${r.resource}`,
    summary: `Get one ${r.resource}`,
    description: `The same object as in the list. Unknown ids, ids of another workspace and records of an uninstalled module are 404. Requires \`${r.scope}\`.`,
    tags: [r.path],
    security: [{ bearerAuth: [r.scope] }],
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: `Record id (\`${r.idPrefix}_…\`).` }],
    responses: {
      '200': { description: 'The record.', headers: commonHeaders, content: { 'application/json': { schema: ref(r.resource) } } },
      ...errors,
      '404': resp('NotFound'),
    },
  };
}

function scopesSchema(): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['key_id', 'environment', 'workspace_id', 'scopes', 'expires_at'],
    properties: {
      key_id: { type: 'string', description: 'Public identifier of the key.' },
      environment: { type: 'string', enum: ['live', 'test'] },
      workspace_id: { type: 'string' },
      scopes: {
        type: 'array',
        items: { type: 'string' },
        description: 'Scopes the presented key holds (read scopes and possibly write scopes of other APIs).',
      },
      expires_at: { type: 'string', format: 'date-time' },
    },
  };
}

function scopesPath(): JsonSchema {
  return {
    get: {
      operationId: 'getScopes',
      summary: 'Scopes of the presented key',
      description:
        'The key that made the request: its id, environment, workspace, scopes and expiry. Needs no scope, so an integration can check at start-up which registers its key can read (a register outside its scopes answers 403 `missing_scope`).',
      tags: ['scopes'],
      security: [{ bearerAuth: [] }],
      responses: {
        '200': {
          description: 'The key and its scopes.',
          headers: commonHeaders,
          content: { 'application/json': { schema: ref('Scopes') } },
        },
        '400': resp('BadRequest'),
        '401': resp('Unauthorized'),
        '429': resp('TooManyRequests'),
        ...TRANSPORT_ERRORS,
      },
    },
  };
}

function documentInfo(baseUrl: string): JsonSchema {
  return {
    title: 'wsops read API',
    version: '1',
    summary: 'Read API (/api/v1) and signed webhooks of a workspace-operations service.',
    contact: { name: 'wsops API support: quote the request_id of the response', url: `${baseUrl}/developers/errors` },
    license: { name: 'MIT', identifier: 'MIT' },
    description:
      "Read-only JSON access to a workspace's operational registers. Every request carries `Authorization: Bearer svc_sk_<env>_<key_id>_<secret>`. Lists are paged with signed cursors (400 `invalid_cursor`, `cursor_expired` after 24 h, `cursor_filters_mismatch`) and can be synced with `updated_since` (strictly after); each register's deletions feed (`/api/v1/{register}/deletions`) lists the ids deleted since a `since` instant, so a mirror sees deletions without a full walk. Unknown query parameters are a 400. Errors are RFC 9457 problem details. Send `Accept-Encoding` (`br`, `gzip`) to receive responses of 1 KB or more compressed; every response carries `Vary: Accept-Encoding`.",
  };
}

function documentTags(): JsonSchema[] {
  return [
    ...REGISTERS.map((r) => ({ name: r.path, description: r.description })),
    { name: 'scopes', description: 'What the presented API key may read: `GET /api/v1/scopes` answers with its scopes.' },
    {
      name: 'events',
      description: 'The events the webhooks carry, to list and fetch: catch up after an outage, or reconcile (`GET /api/v1/events`).',
    },
    { name: 'webhooks', description: 'Signed deliveries this service POSTs to registered endpoints.' },
  ];
}

function components(schemas: Record<string, JsonSchema>): JsonSchema {
  return {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: `Workspace API key. Scopes: ${READ_SCOPES.join(', ')}.`,
      },
    },
    parameters: queryParameters(),
    headers: {
      'Request-Id': { description: 'Identifier of this request; quote it in support requests.', schema: { type: 'string' } },
      RateLimit: { description: 'Remaining requests (`r`) and seconds until the bucket is full (`t`).', schema: { type: 'string' } },
      'RateLimit-Policy': { description: 'Per-key token bucket: size `q`, refill window `w` seconds.', schema: { type: 'string' } },
      'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
    },
    responses: publicResponses(),
    schemas,
  };
}

/** components/parameters: the paging and sync parameters every list shares. */
function queryParameters(): Record<string, JsonSchema> {
  return {
    limit: {
      name: 'limit',
      in: 'query',
      required: false,
      description: `Records per page, ${1} to ${MAX_LIMIT}. May change between pages of one walk.`,
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    },
    cursor: {
      name: 'cursor',
      in: 'query',
      required: false,
      description:
        'The `next_cursor` of the previous page. Signed; expires 24 hours after issue; valid only on the operation that issued it (a list or a deletions feed) with the same filters, search and updated_since (or since). Leave it out for the first page: an empty `cursor=`, like any empty query parameter, is a 400 `invalid_parameter`.',
      // Never empty, like every query parameter (list-query.ts `single`): a client that
      // sends `cursor=` for "no cursor" is told so by its own validation, not by a 400.
      schema: { type: 'string', minLength: 1 },
    },
    since: sinceParameter(INSTANT_PATTERN),
    updated_since: {
      name: 'updated_since',
      in: 'query',
      required: false,
      description: `ISO 8601 instant with an offset (\`2026-11-21T08:00:00Z\`, \`2026-11-21T09:00:00+01:00\`); only records with \`updated_at\` strictly after it. No leap second (\`:60\`). ${INSTANT_EDGES}`,
      schema: { type: 'string', format: 'date-time', pattern: INSTANT_PATTERN },
    },
  };
}

/** components/responses: the problem answered for each status. */
function publicResponses(): Record<string, JsonSchema> {
  return {
    BadRequest: problemResponse(
      'A parameter is invalid (`invalid_parameter`, `unknown_parameter`, `search_not_supported`, `invalid_cursor`, `cursor_expired`, `cursor_filters_mismatch`; on a deletions feed also `deletions_beyond_retention`, on the events list `events_beyond_retention`), or the request cannot be read (`invalid_request`: a malformed percent-escape in the path or the query).',
    ),
    RequestTimeout: problemResponse(
      `\`request_timeout\`: ${ERROR_CATALOGUE.request_timeout.meaning} ${ERROR_CATALOGUE.request_timeout.fix}`,
    ),
    UriTooLong: problemResponse(`\`uri_too_long\`: ${ERROR_CATALOGUE.uri_too_long.meaning} ${ERROR_CATALOGUE.uri_too_long.fix}`),
    HeaderFieldsTooLarge: problemResponse(
      `\`header_fields_too_large\`: ${ERROR_CATALOGUE.header_fields_too_large.meaning} ${ERROR_CATALOGUE.header_fields_too_large.fix}`,
    ),
    Unauthorized: problemResponse('The key was not accepted (one answer for every reason).', {
      'WWW-Authenticate': { schema: { type: 'string' } },
    }),
    Forbidden: problemResponse(
      'The key lacks the scope this endpoint requires (`missing_scope` names it), or the key holds an IP allowlist and the request came from elsewhere (`ip_not_allowed`).',
    ),
    NotFound: problemResponse('No such record in this workspace.'),
    TooManyRequests: problemResponse(
      'The key exceeded its rate limit (with `key_id` and the RateLimit headers), or the client address spent its budget of failed authentications (every request from it is refused until `Retry-After`).',
      {
        'Retry-After': { $ref: '#/components/headers/Retry-After' },
        RateLimit: { $ref: '#/components/headers/RateLimit' },
        'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
      },
    ),
  };
}
