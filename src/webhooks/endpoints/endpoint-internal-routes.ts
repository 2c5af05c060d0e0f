/**
 * The webhook endpoints (and event destinations) on the internal listener, with the operator
 * token like the actions: registration (its answer shows the signing secret once, as
 * `wsops endpoint create` prints it: both are the operator's), the list, whether an endpoint's
 * deliveries also carry the Standard Webhooks headers, and its content filter (event-filter.ts).
 * Rotation stays a console and CLI action.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import type { FailureThrottle } from '../../guards/failure-throttle.js';
import { authorizeOperator } from '../../guards/operator-token.js';
import type { Logger } from '../../logger.js';
import { JSON_TYPE } from '../../media-types.js';
import { idPattern, idRule } from '../../registers/fields.js';
import type { SecretBox } from '../../secret-box.js';
import type { Database } from '../../store/database.js';
import { getWorkspace } from '../../workspaces/workspaces.js';
import { setEndpointFilter } from './endpoint-filters.js';
import { createEndpoint, listEndpoints, setStandardWebhooks } from './endpoints.js';

/** What this file takes of the services built at start (services.ts). */
export interface EndpointInternalRoutesServices {
  config: Config;
  database: Database;
  secretBox: SecretBox;
  failureThrottle: FailureThrottle;
  clock: Clock;
  logger: Logger;
}

export const ENDPOINTS_PATH = '/internal/v1/workspaces/:workspace_id/webhook-endpoints';
export const ENDPOINT_SIGNATURES_PATH = '/internal/v1/workspaces/:workspace_id/webhook-endpoints/:id/signatures';
export const ENDPOINT_FILTER_PATH = '/internal/v1/workspaces/:workspace_id/webhook-endpoints/:id/filter';

const notTheShape = (shape: string, param: string | undefined) =>
  new AppError('invalid_parameter', `The body must be a JSON object: ${shape}.`, { param });

/**
 * A body's members: a JSON object (else a 400 that shows `shape`) holding only the `allowed`
 * members (else a 400 naming the first other one, and saying what the body `takes`).
 */
function membersOf(body: unknown, allowed: readonly string[], shape: string, takes: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw notTheShape(shape, allowed[0]);
  const extra = Object.keys(body).find((k) => !allowed.includes(k));
  if (extra !== undefined) {
    throw new AppError('unknown_parameter', `Unknown member "${extra.slice(0, 40)}"; ${takes}.`, { param: extra.slice(0, 40) });
  }
  return body as Record<string, unknown>;
}

const FILTER_SHAPE = '{"filter": {...}} to set the filter, {"filter": null} to clear it';

/** `{"filter": {...}}` or `{"filter": null}` and nothing else; the filter's own rules are event-filter.ts's. */
export function parseFilterBody(body: unknown): unknown {
  // An object without the member is told the shape, whatever else it holds.
  if (typeof body === 'object' && body !== null && !Object.hasOwn(body, 'filter')) throw notTheShape(FILTER_SHAPE, 'filter');
  const filter = membersOf(body, ['filter'], FILTER_SHAPE, 'the body takes filter only')['filter'];
  // Text here would be a filter given twice over (JSON in JSON): the member is the object itself.
  if (filter !== null && (typeof filter !== 'object' || Array.isArray(filter))) {
    throw new AppError('invalid_parameter', 'filter must be a JSON object (the filter) or null (no filter).', { param: 'filter' });
  }
  return filter;
}

/** The members a registration takes, each with the type it must have. */
const REGISTRATION_MEMBERS = {
  url: 'string',
  scopes: 'list',
  events: 'list',
  standard_webhooks: 'boolean',
  exchange: 'string',
  routing_key: 'string',
  subject: 'string',
  filter: 'filter',
} as const;
const WANTED = { string: 'a string', boolean: 'true or false', list: 'an array of strings', filter: 'a JSON object or null' } as const;

function hasType(value: unknown, kind: (typeof REGISTRATION_MEMBERS)[keyof typeof REGISTRATION_MEMBERS]): boolean {
  if (kind === 'string') return typeof value === 'string';
  if (kind === 'boolean') return typeof value === 'boolean';
  if (kind === 'list') return Array.isArray(value) && value.every((v) => typeof v === 'string');
  return value === null || (typeof value === 'object' && !Array.isArray(value));
}

export interface Registration {
  url: string;
  scopes: string[];
  events: string[];
  standardWebhooks: boolean;
  exchange?: string;
  routingKey?: string;
  subject?: string;
  filter?: unknown;
}

/**
 * A registration body: `url`, `scopes` and `events` (arrays of strings) required, the rest
 * optional; an unknown member, or one of the wrong type, is a 400 naming it. What each value must
 * be (a URL the rules allow, known scopes and events, a filter) is createEndpoint's to say.
 */
export function parseRegistrationBody(body: unknown): Registration {
  const names = Object.keys(REGISTRATION_MEMBERS);
  const members = membersOf(body, names, '{"url": "…", "scopes": [...], "events": [...]}', `a registration takes ${names.join(', ')}`);
  for (const [name, kind] of Object.entries(REGISTRATION_MEMBERS)) {
    const value = members[name];
    if (value === undefined) {
      if (name === 'url' || name === 'scopes' || name === 'events')
        throw new AppError('invalid_parameter', `${name} is required.`, { param: name });
    } else if (!hasType(value, kind)) {
      throw new AppError('invalid_parameter', `${name} must be ${WANTED[kind]}.`, { param: name });
    }
  }
  const given = <T>(name: string): T | undefined => members[name] as T | undefined;
  const optional = <T>(key: string, value: T | undefined) => (value === undefined ? {} : { [key]: value });
  return {
    url: members['url'] as string,
    scopes: members['scopes'] as string[],
    events: members['events'] as string[],
    standardWebhooks: members['standard_webhooks'] === true,
    ...optional('exchange', given<string>('exchange')),
    ...optional('routingKey', given<string>('routing_key')),
    ...optional('subject', given<string>('subject')),
    ...optional('filter', given<unknown>('filter')),
  };
}

/** `{"standard_webhooks": true|false}` and nothing else; anything else is a 400 naming the rule. */
export function parseSignaturesBody(body: unknown): boolean {
  const members = membersOf(body, ['standard_webhooks'], '{"standard_webhooks": true} or false', 'the body takes standard_webhooks only');
  const value = members['standard_webhooks'];
  if (typeof value !== 'boolean') {
    throw new AppError('invalid_parameter', 'standard_webhooks must be true or false.', { param: 'standard_webhooks' });
  }
  return value;
}

/** The workspace id of a path, checked before anything is read. */
function workspaceOf(params: { workspace_id: string }): string {
  if (!idPattern('wsp').test(params.workspace_id)) {
    throw new AppError('invalid_parameter', `The workspace id must be ${idRule('wsp')}.`, { param: 'workspace_id' });
  }
  return params.workspace_id;
}

export function registerEndpointInternalRoutes(app: FastifyInstance, services: EndpointInternalRoutesServices): void {
  const operator = { onRequest: async (request: FastifyRequest, reply: FastifyReply) => authorizeOperator(services, request, reply) };
  app.post<{ Params: { workspace_id: string } }>(ENDPOINTS_PATH, operator, async (request, reply) => {
    const workspaceId = workspaceOf(request.params);
    const registration = parseRegistrationBody(request.body);
    await getWorkspace(services.database.db, workspaceId);
    const created = await createEndpoint(services, workspaceId, { ...registration, actor: 'operator' });
    return reply.code(201).type(JSON_TYPE).send(JSON.stringify(created));
  });
  app.get<{ Params: { workspace_id: string } }>(ENDPOINTS_PATH, operator, async (request, reply) => {
    const workspaceId = workspaceOf(request.params);
    await getWorkspace(services.database.db, workspaceId);
    const data = await listEndpoints(services, workspaceId);
    return reply.type(JSON_TYPE).send(JSON.stringify({ data }));
  });
  app.put<{ Params: { workspace_id: string; id: string } }>(ENDPOINT_SIGNATURES_PATH, operator, async (request, reply) => {
    const workspaceId = workspaceOf(request.params);
    const { id } = request.params;
    const on = parseSignaturesBody(request.body);
    await getWorkspace(services.database.db, workspaceId);
    const view = await setStandardWebhooks(services, workspaceId, id, on, 'operator');
    return reply.type(JSON_TYPE).send(JSON.stringify(view));
  });
  app.put<{ Params: { workspace_id: string; id: string } }>(ENDPOINT_FILTER_PATH, operator, async (request, reply) => {
    const workspaceId = workspaceOf(request.params);
    const { id } = request.params;
    const filter = parseFilterBody(request.body);
    await getWorkspace(services.database.db, workspaceId);
    const view = await setEndpointFilter(services, workspaceId, id, filter, 'operator');
    return reply.type(JSON_TYPE).send(JSON.stringify(view));
  });
}
