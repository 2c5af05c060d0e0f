/**
 * The internal listener's operations routes in the internal document: liveness, readiness,
 * Prometheus metrics and the document itself. None needs the operator token.
 */
import type { JsonSchema } from '../registers/fields.js';
import { schemaRef, TRANSPORT } from './internal-openapi-responses.js';

const requestIdHeader = { 'Request-Id': { $ref: '#/components/headers/Request-Id' } };
const json = (description: string, schema: JsonSchema) => ({
  description,
  headers: requestIdHeader,
  content: { 'application/json': { schema } },
});

export function operationsSchemas(): Record<string, JsonSchema> {
  return {
    Readiness: {
      type: 'object',
      additionalProperties: false,
      required: ['ok', 'checks'],
      properties: {
        ok: { type: 'boolean', description: 'True when every check passed.' },
        checks: {
          type: 'object',
          description: '`database` always; `redis` when WSOPS_REDIS_URL is set.',
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            required: ['ok', 'latency_ms'],
            properties: {
              ok: { type: 'boolean' },
              latency_ms: { type: 'integer', minimum: 0 },
              error: { type: 'string', description: 'Why the check failed (no credential is ever echoed).' },
            },
          },
        },
      },
    },
  };
}

export function operationsPaths(): Record<string, JsonSchema> {
  const op = (operationId: string, summary: string, description: string, responses: Record<string, unknown>) => ({
    get: { operationId, tags: ['operations'], summary, description, security: [], responses: { ...responses, ...TRANSPORT } },
  });
  return {
    '/healthz': op('getHealth', 'Liveness', 'Answers as long as the process serves requests; it checks no dependency (see /readyz).', {
      '200': json('The process is alive.', {
        type: 'object',
        additionalProperties: false,
        required: ['ok'],
        properties: { ok: { const: true } },
      }),
    }),
    '/readyz': op(
      'getReadiness',
      'Readiness',
      'Checks the database (`SELECT 1`) and, when configured, Redis (PING), each within 1 s: take the node out of a load balancer while it answers 503.',
      {
        '200': json('Every dependency answered.', schemaRef('Readiness')),
        '503': json('A dependency did not answer in time or failed; `checks` says which.', schemaRef('Readiness')),
      },
    ),
    '/metrics': op('getMetrics', 'Prometheus metrics', 'Request, delivery and database metrics in the Prometheus text format.', {
      '200': {
        description: 'The metrics.',
        headers: requestIdHeader,
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
    }),
    '/internal/openapi.json': op(
      'getInternalOpenApi',
      'This document',
      'The OpenAPI document of the internal listener; it describes, it grants nothing, so it needs no token.',
      { '200': json('The document.', { type: 'object' }) },
    ),
  };
}
