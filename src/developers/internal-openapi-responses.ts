/**
 * The problems of the internal document: their schemas, the problem responses (one per status
 * the internal listener answers), and which of them each kind of operation can meet. Shared by
 * the record, import, action, operations and endpoint parts of the document.
 */
import { ERROR_CATALOGUE, type ErrorCode } from '../errors.js';
import type { JsonSchema } from '../registers/fields.js';
import { FIELD_PROBLEM_CODES } from '../registers/record-input.js';
import { problemSchema } from './openapi.js';

export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });

const explain = (...codes: ErrorCode[]) => codes.map((c) => `\`${c}\`: ${ERROR_CATALOGUE[c].meaning}`).join(' ');

function problem(description: string, headers: Record<string, unknown> = {}): JsonSchema {
  return {
    description,
    headers: { 'Request-Id': { $ref: '#/components/headers/Request-Id' }, ...headers },
    content: { 'application/problem+json': { schema: schemaRef('Problem') } },
  };
}

/** components/responses of the internal document. */
export const INTERNAL_RESPONSES: Record<string, JsonSchema> = {
  BadRequest: problem(
    `The request cannot be taken as it is; \`param\` names the parameter or argument when there is one. ${explain('invalid_parameter', 'unknown_parameter', 'invalid_request')} A body that is not valid JSON, and a malformed percent-escape in the path or query, are \`invalid_request\`.`,
  ),
  Unauthorized: problem('`unauthorized`: the operator token was not accepted (missing, malformed or wrong: one answer).', {
    'WWW-Authenticate': { description: 'Bearer realm="wsops-internal".', schema: { type: 'string' } },
  }),
  Forbidden: problem('`forbidden`: the internal API is disabled: WSOPS_OPERATOR_TOKEN is not set on the server.'),
  NotFound: problem('`not_found`: no such workspace, register, record, or action, or the module the action needs is not installed.'),
  Conflict: problem(`\`invalid_state\`: ${ERROR_CATALOGUE.invalid_state.meaning} Nothing was changed.`),
  LimitReached: problem(`\`limit_reached\`: ${ERROR_CATALOGUE.limit_reached.meaning} ${ERROR_CATALOGUE.limit_reached.fix}`),
  Referenced: problem(`\`referenced\`: ${ERROR_CATALOGUE.referenced.meaning} \`referrers\` lists them per register and field.`),
  PreconditionFailed: problem(`\`precondition_failed\`: ${ERROR_CATALOGUE.precondition_failed.meaning}`),
  PayloadTooLarge: problem(`\`payload_too_large\`: ${ERROR_CATALOGUE.payload_too_large.meaning}`),
  UriTooLong: problem(`\`uri_too_long\`: a path segment is longer than 200 characters. ${ERROR_CATALOGUE.uri_too_long.fix}`),
  UnsupportedMediaType: problem(`\`unsupported_media_type\`: ${ERROR_CATALOGUE.unsupported_media_type.meaning}`),
  InvalidRecord: problem("`invalid_record`: the record breaks its register's declaration; `errors` names each field by JSON pointer."),
  TooManyRequests: problem(
    '`rate_limited`: too many failed operator tokens from this address; every request from it is refused until `Retry-After`, the right token too.',
    { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
  ),
  RequestTimeout: problem(`\`request_timeout\`: ${ERROR_CATALOGUE.request_timeout.meaning}`),
  HeaderFieldsTooLarge: problem(`\`header_fields_too_large\`: ${ERROR_CATALOGUE.header_fields_too_large.meaning}`),
  StorageUnavailable: problem(
    "`storage_full`: the database's disk is full, or `database_unavailable`: the connection to the database was lost. Nothing of the failed write is stored half; an import says in `lines_applied` how many lines its committed batches had applied. Retry after `Retry-After` seconds; the same import again converges.",
    { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
  ),
  InternalError: problem(`\`internal_error\`: ${ERROR_CATALOGUE.internal_error.meaning} ${ERROR_CATALOGUE.internal_error.fix}`),
};

/** Any request: the HTTP parser's refusals, a malformed query string, and a fault of the server. */
export const TRANSPORT = {
  '400': responseRef('BadRequest'),
  '408': responseRef('RequestTimeout'),
  '431': responseRef('HeaderFieldsTooLarge'),
  '500': responseRef('InternalError'),
};
/** An operation with the operator token. */
export const OPERATOR = {
  ...TRANSPORT,
  '401': responseRef('Unauthorized'),
  '403': responseRef('Forbidden'),
  '429': responseRef('TooManyRequests'),
  '503': responseRef('StorageUnavailable'),
};
/** An operation with path parameters: a segment over 200 characters is a 414, an unknown id a 404. */
export const WITH_PATH = { ...OPERATOR, '404': responseRef('NotFound'), '414': responseRef('UriTooLong') };
/** An operation that reads a JSON body. */
export const WITH_JSON_BODY = { ...WITH_PATH, '413': responseRef('PayloadTooLarge'), '415': responseRef('UnsupportedMediaType') };

export const only = (name: string) => responseRef(name);

/** The `code` of a refused field, in a record write's 422 and in an import's refused line alike. */
export function fieldCodeSchema(): JsonSchema {
  return {
    type: 'string',
    enum: Object.keys(FIELD_PROBLEM_CODES),
    description: Object.entries(FIELD_PROBLEM_CODES)
      .map(([c, d]) => `\`${c}\`: ${d}`)
      .join('\n'),
  };
}

/** The problem document, with the members a record write or an import adds, and its field problems. */
export function problemSchemas(): Record<string, JsonSchema> {
  return {
    FieldProblem: {
      type: 'object',
      additionalProperties: false,
      required: ['pointer', 'code', 'detail'],
      properties: { pointer: { type: 'string' }, code: fieldCodeSchema(), detail: { type: 'string' } },
    },
    Problem: problemSchema({
      pointer: { type: 'string', description: 'On a 422: the JSON pointer of the first refused field.' },
      errors: { type: 'array', items: schemaRef('FieldProblem'), description: 'On a 422: every refused field.' },
      referrers: {
        type: 'array',
        items: schemaRef('Referrers'),
        description: 'On a 409 `referenced`: the records that still name the one to delete.',
      },
      lines_applied: {
        type: 'integer',
        description: 'On a 503 to an import: the lines its batches had applied, in whole batches, before it stopped.',
      },
      import_id: { type: 'string', description: 'On a 503 to an import: its id (`wsops imports` lists it).' },
    }),
  };
}
