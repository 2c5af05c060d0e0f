/**
 * The OpenAPI 3.1 document of the internal listener (served at /internal/openapi.json, committed
 * as openapi-internal.json): the record writes (internal-openapi-records.ts), import and export
 * (internal-openapi-imports.ts) derived from the same register declarations as the public
 * document, the domain actions from their definitions (internal-openapi-actions.ts), the
 * operations routes (internal-openapi-operations.ts) and the webhook endpoints
 * (internal-openapi-endpoints.ts). The public document stays /api/v1 only.
 */
import { ERRORS_PAGE_PATH } from '../errors.js';
import { REGISTERS } from '../registers/catalogue.js';
import { ID_PATTERN_BODY, type JsonSchema } from '../registers/fields.js';
import { actionPaths, actionSchemas } from './internal-openapi-actions.js';
import { endpointPaths, endpointSchemas } from './internal-openapi-endpoints.js';
import { importExportPaths, importSchemas } from './internal-openapi-imports.js';
import { operationsPaths, operationsSchemas } from './internal-openapi-operations.js';
import { recordPaths, recordSchemas } from './internal-openapi-records.js';
import { INTERNAL_RESPONSES, problemSchemas } from './internal-openapi-responses.js';

export function buildInternalOpenApi(baseUrl: string): JsonSchema {
  // The parts in the order openapi-internal.json lists their paths and schemas: another order is another document.
  const paths = { ...recordPaths(), ...importExportPaths(), ...actionPaths(), ...operationsPaths(), ...endpointPaths() };
  const schemas = {
    ...recordSchemas(),
    ...importSchemas(),
    ...problemSchemas(),
    ...actionSchemas(),
    ...operationsSchemas(),
    ...endpointSchemas(),
  };
  return {
    openapi: '3.1.0',
    info: documentInfo(baseUrl),
    tags: documentTags(),
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
    components: components(schemas),
  };
}

function documentInfo(baseUrl: string): JsonSchema {
  return {
    title: 'wsops internal API: system of record writes',
    version: '1',
    license: { name: 'MIT', identifier: 'MIT' },
    contact: { name: 'wsops operators: quote the request_id of the response', url: `${baseUrl}${ERRORS_PAGE_PATH}` },
    description:
      'Served on the internal listener (WSOPS_INTERNAL_PORT) only, with the operator token. Direct writes move `updated_at` and emit no event; state changes that have an event go through the domain actions (`POST /internal/v1/actions/{action}`). Every error is an RFC 9457 problem (`application/problem+json`) with a stable `code` and the `request_id`, as on the public API.',
  };
}

function documentTags(): JsonSchema[] {
  return [
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
  ];
}

function components(schemas: Record<string, JsonSchema>): JsonSchema {
  return {
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
  };
}
