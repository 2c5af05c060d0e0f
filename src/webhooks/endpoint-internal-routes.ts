/**
 * The endpoint settings an operator's automation may change on the internal listener, with the
 * operator token like the actions: whether an endpoint's deliveries also carry the Standard
 * Webhooks headers, and its content filter (event-filter.ts). Registration and rotation stay console and CLI actions, since
 * they show a secret.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { FailureThrottle } from '../keys/failure-throttle.js';
import { authorizeOperator } from '../keys/operator-token.js';
import type { Logger } from '../logger.js';
import { JSON_TYPE } from '../media-types.js';
import { idPattern, idRule } from '../registers/fields.js';
import type { SecretBox } from '../secret-box.js';
import type { Database } from '../store/database.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { setEndpointFilter } from './endpoint-filters.js';
import { setStandardWebhooks } from './endpoints.js';

/** What this file takes of the services built at start (services.ts). */
export interface EndpointInternalRoutesServices {
  config: Config;
  database: Database;
  secretBox: SecretBox;
  failureThrottle: FailureThrottle;
  clock: Clock;
  logger: Logger;
}

export const ENDPOINT_SIGNATURES_PATH = '/internal/v1/workspaces/:workspace_id/webhook-endpoints/:id/signatures';
export const ENDPOINT_FILTER_PATH = '/internal/v1/workspaces/:workspace_id/webhook-endpoints/:id/filter';

/** `{"filter": {...}}` or `{"filter": null}` and nothing else; the filter's own rules are event-filter.ts's. */
export function parseFilterBody(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Object.hasOwn(body, 'filter')) {
    throw new AppError(
      'invalid_parameter',
      'The body must be a JSON object: {"filter": {...}} to set the filter, {"filter": null} to clear it.',
      {
        param: 'filter',
      },
    );
  }
  const extra = Object.keys(body).find((k) => k !== 'filter');
  if (extra !== undefined) {
    throw new AppError('unknown_parameter', `Unknown member "${extra.slice(0, 40)}"; the body takes filter only.`, {
      param: extra.slice(0, 40),
    });
  }
  const filter = (body as { filter: unknown }).filter;
  // Text here would be a filter given twice over (JSON in JSON): the member is the object itself.
  if (filter !== null && (typeof filter !== 'object' || Array.isArray(filter))) {
    throw new AppError('invalid_parameter', 'filter must be a JSON object (the filter) or null (no filter).', { param: 'filter' });
  }
  return filter;
}

/** `{"standard_webhooks": true|false}` and nothing else; anything else is a 400 naming the rule. */
export function parseSignaturesBody(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('invalid_parameter', 'The body must be a JSON object: {"standard_webhooks": true} or false.', {
      param: 'standard_webhooks',
    });
  }
  const extra = Object.keys(body).find((k) => k !== 'standard_webhooks');
  if (extra !== undefined) {
    throw new AppError('unknown_parameter', `Unknown member "${extra.slice(0, 40)}"; the body takes standard_webhooks only.`, {
      param: extra.slice(0, 40),
    });
  }
  const value = (body as { standard_webhooks?: unknown }).standard_webhooks;
  if (typeof value !== 'boolean') {
    throw new AppError('invalid_parameter', 'standard_webhooks must be true or false.', { param: 'standard_webhooks' });
  }
  return value;
}

export function registerEndpointInternalRoutes(app: FastifyInstance, services: EndpointInternalRoutesServices): void {
  app.put<{ Params: { workspace_id: string; id: string } }>(
    ENDPOINT_SIGNATURES_PATH,
    { onRequest: async (request, reply) => authorizeOperator(services, request, reply) },
    async (request, reply) => {
      const { workspace_id: workspaceId, id } = request.params;
      if (!idPattern('wsp').test(workspaceId)) {
        throw new AppError('invalid_parameter', `The workspace id must be ${idRule('wsp')}.`, { param: 'workspace_id' });
      }
      const on = parseSignaturesBody(request.body);
      await getWorkspace(services.database.db, workspaceId);
      const view = await setStandardWebhooks(services, workspaceId, id, on, 'operator');
      return reply.type(JSON_TYPE).send(JSON.stringify(view));
    },
  );
  app.put<{ Params: { workspace_id: string; id: string } }>(
    ENDPOINT_FILTER_PATH,
    { onRequest: async (request, reply) => authorizeOperator(services, request, reply) },
    async (request, reply) => {
      const { workspace_id: workspaceId, id } = request.params;
      if (!idPattern('wsp').test(workspaceId)) {
        throw new AppError('invalid_parameter', `The workspace id must be ${idRule('wsp')}.`, { param: 'workspace_id' });
      }
      const filter = parseFilterBody(request.body);
      await getWorkspace(services.database.db, workspaceId);
      const view = await setEndpointFilter(services, workspaceId, id, filter, 'operator');
      return reply.type(JSON_TYPE).send(JSON.stringify(view));
    },
  );
}
