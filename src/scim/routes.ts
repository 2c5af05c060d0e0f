/**
 * The SCIM 2.0 service provider on the public listener, `/scim/v2/` (RFC 7644): discovery and
 * Users, for the workspace of the SCIM token presented. Every answer is application/scim+json,
 * every failure a SCIM error (errors.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { FailureThrottle } from '../guards/failure-throttle.js';
import type { RateLimiter } from '../guards/rate-limit.js';
import type { Database } from '../store/database.js';
import { authenticateScim } from './auth.js';
import { listUsers } from './directory.js';
import { GROUPS_UNSUPPORTED, listOf, resourceTypes, schemas, serviceProviderConfig } from './discovery.js';
import { invalidSyntax, notFound, SCIM_CONTENT_TYPE, ScimError, scimErrorHandler, sendError } from './errors.js';
import { compileFilter, scans as scansAll } from './filter.js';
import { OnePerKey } from './one-per-key.js';
import { patchedUser } from './patch.js';
import { project, readQuery } from './query.js';
import type { ScimTokenEntry } from './tokens.js';
import { createUser, deleteUser, patchUser, readUser, replaceUser } from './user-writes.js';
import { personToUser, USER_SCHEMA } from './users.js';

/** What this file takes of the services built at start (services.ts). */
export interface ScimRoutesServices {
  config: Config;
  database: Database;
  rateLimiter: RateLimiter;
  failureThrottle: FailureThrottle;
  clock: Clock;
}

export const SCIM_PREFIX = '/scim/v2';

type WithId = { Params: { id: string } };

/** Lists whose filter no index serves that may wait behind the one a workspace runs, per process. */
const SCANS_WAITING = 4;
/** The share of time a workspace's such lists may take in a process: a quarter of a core at most. */
const SCANS_SHARE = 0.25;

function send(reply: FastifyReply, status: number, body: unknown) {
  return reply.code(status).type(SCIM_CONTENT_TYPE).send(JSON.stringify(body));
}

/** A User body names the core User schema (RFC 7643 §3); other shapes are refused before any read. */
function checkUserSchemas(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalidSyntax('The body must be a JSON object: a User.');
  const s = (body as { schemas?: unknown }).schemas;
  if (!Array.isArray(s) || !s.some((x) => typeof x === 'string' && x.toLowerCase() === USER_SCHEMA.toLowerCase())) {
    throw invalidSyntax(`A User's schemas must hold ${USER_SCHEMA}.`);
  }
}

export function registerScimRoutes(app: FastifyInstance, services: ScimRoutesServices): void {
  const base = services.config.baseUrl;
  const scans = new OnePerKey(SCANS_WAITING, SCANS_SHARE);
  const scanned = <T>(workspaceId: string, read: () => Promise<T>, reply: FastifyReply): Promise<T> => {
    const queued = scans.run(workspaceId, read);
    if (queued) return queued;
    reply.header('Retry-After', '1');
    throw new ScimError(
      429,
      `This workspace already has ${SCANS_WAITING} SCIM reads waiting whose filter no index serves (they run one at a time, at most a quarter of the time); retry after 1 s, or filter by userName, externalId, id, emails or employeeNumber with eq.`,
    );
  };
  const userOf = (p: { person: Record<string, unknown>; link: Parameters<typeof personToUser>[1] }) => personToUser(p.person, p.link, base);

  void app.register(
    async (scope) => {
      scope.setErrorHandler(scimErrorHandler);
      scope.setNotFoundHandler((request, reply) => {
        const unsupported = /^\/scim\/v2\/(Groups|Bulk|Me|\.search)\b/i.exec(request.url)?.[1];
        const [status, detail] = unsupported
          ? [
              501,
              unsupported.toLowerCase() === 'groups'
                ? GROUPS_UNSUPPORTED
                : `${unsupported} is not supported (see /scim/v2/ServiceProviderConfig).`,
            ]
          : [404, `No SCIM endpoint ${request.method} ${request.url.split('?')[0]?.slice(0, 200)}.`];
        return sendError(reply, status, detail);
      });
      // SCIM bodies are JSON under their own media type; the same parser refuses a __proto__ key.
      scope.addContentTypeParser(['application/scim+json'], { parseAs: 'string' }, scope.getDefaultJsonParser('error', 'error'));
      scope.decorateRequest('scimToken', null);
      scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
        (request as FastifyRequest & { scimToken: ScimTokenEntry }).scimToken = await authenticateScim(services, request, reply);
      });
      const tokenOf = (request: FastifyRequest) => (request as FastifyRequest & { scimToken: ScimTokenEntry }).scimToken;

      scope.get('/ServiceProviderConfig', async (_request, reply) => send(reply, 200, serviceProviderConfig(base)));
      scope.get('/ResourceTypes', async (_request, reply) => send(reply, 200, listOf(resourceTypes(base))));
      scope.get<WithId>('/ResourceTypes/:id', async (request, reply) => {
        const found = resourceTypes(base).find((r) => r.id === request.params.id);
        if (!found)
          throw request.params.id === 'Group'
            ? new ScimError(404, GROUPS_UNSUPPORTED)
            : notFound(`No resource type ${request.params.id.slice(0, 80)}; the one there is: User.`);
        return send(reply, 200, found);
      });
      scope.get('/Schemas', async (_request, reply) => send(reply, 200, listOf(schemas(base))));
      scope.get<WithId>('/Schemas/:id', async (request, reply) => {
        const found = schemas(base).find((s) => s.id === request.params.id);
        if (!found) throw notFound(`No schema ${request.params.id.slice(0, 120)}; see /scim/v2/Schemas.`);
        return send(reply, 200, found);
      });

      scope.get('/Users', async (request, reply) => {
        const q = readQuery(request.query, true);
        const filter = q.filter === undefined ? undefined : compileFilter(q.filter);
        const token = tokenOf(request);
        // The answer's text is part of the read: a page of 200 Users takes the event loop as long
        // as a cheap scan, so the budget below counts it too.
        const read = async () => {
          const { total, page } = await listUsers(services.database, token.workspaceId, filter, q.startIndex, q.count);
          return JSON.stringify({
            schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
            totalResults: total,
            startIndex: q.startIndex,
            itemsPerPage: page.length,
            Resources: page.map((p) => project(userOf(p), q)),
          });
        };
        // A filter no index serves reads the workspace's people in the database: one at a time per workspace.
        const text = filter === undefined || !scansAll(filter) ? await read() : await scanned(token.workspaceId, read, reply);
        return reply.code(200).type(SCIM_CONTENT_TYPE).send(text);
      });

      scope.post('/Users', async (request, reply) => {
        checkUserSchemas(request.body);
        const saved = await createUser(services, tokenOf(request), request.body);
        const user = userOf(saved);
        reply.header('Location', (user.meta as { location: string }).location);
        return send(reply, 201, user);
      });

      scope.get<WithId>('/Users/:id', async (request, reply) => {
        const q = readQuery(request.query, false);
        return send(reply, 200, project(userOf(await readUser(services, tokenOf(request), request.params.id)), q));
      });

      scope.put<WithId>('/Users/:id', async (request, reply) => {
        checkUserSchemas(request.body);
        return send(reply, 200, userOf(await replaceUser(services, tokenOf(request), request.params.id, request.body)));
      });

      scope.patch<WithId>('/Users/:id', async (request, reply) => {
        const saved = await patchUser(services, tokenOf(request), request.params.id, (found) => patchedUser(userOf(found), request.body));
        return send(reply, 200, userOf(saved));
      });

      scope.delete<WithId>('/Users/:id', async (request, reply) => {
        await deleteUser(services, tokenOf(request), request.params.id);
        return reply.code(204).send();
      });
    },
    { prefix: SCIM_PREFIX },
  );
}
