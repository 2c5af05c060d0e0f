/**
 * The SCIM 2.0 service provider on the public listener, `/scim/v2/` (RFC 7644): discovery and
 * Users, for the workspace of the SCIM token presented. Every answer is application/scim+json,
 * every failure a SCIM error (errors.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { FailureThrottle } from '../keys/failure-throttle.js';
import type { RateLimiter } from '../keys/rate-limit.js';
import type { PageReader } from '../read/pages.js';
import type { Database } from '../store/database.js';
import { authenticateScim } from './auth.js';
import { allPeople, peopleByEmail } from './directory.js';
import { GROUPS_UNSUPPORTED, listOf, resourceTypes, schemas, serviceProviderConfig } from './discovery.js';
import { errorBody, invalidSyntax, notFound, SCIM_CONTENT_TYPE, ScimError, scimErrorHandler } from './errors.js';
import { compileFilter } from './filter.js';
import { oneWriterPerWorkspace } from './one-writer.js';
import { patchedUser } from './patch.js';
import { project, readQuery } from './query.js';
import type { ScimTokenEntry } from './tokens.js';
import { createUser, deleteUser, readUser, replaceUser } from './user-writes.js';
import { personToUser, USER_SCHEMA } from './users.js';

/** What this file takes of the services built at start (services.ts). */
export interface ScimRoutesServices {
  config: Config;
  database: Database;
  pages: PageReader;
  rateLimiter: RateLimiter;
  failureThrottle: FailureThrottle;
  clock: Clock;
}

export const SCIM_PREFIX = '/scim/v2';

type WithId = { Params: { id: string } };

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
        return reply
          .code(status)
          .type(SCIM_CONTENT_TYPE)
          .send(errorBody(status, detail, undefined, String(request.id)));
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
        const candidates =
          (filter?.email !== undefined ? await peopleByEmail(services, token.workspaceId, filter.email) : undefined) ??
          (await allPeople(services.database.db, token.workspaceId));
        const found = candidates.filter((p) => p.deletedAt === null && (filter === undefined || filter.matches(p)));
        const page = found.slice(q.startIndex - 1, q.startIndex - 1 + q.count);
        return send(reply, 200, {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
          totalResults: found.length,
          startIndex: q.startIndex,
          itemsPerPage: page.length,
          Resources: page.map((p) => project(userOf(p), q)),
        });
      });

      scope.post('/Users', async (request, reply) => {
        checkUserSchemas(request.body);
        const token = tokenOf(request);
        const saved = await oneWriterPerWorkspace(token.workspaceId, () => createUser(services, token, request.body));
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
        const token = tokenOf(request);
        const saved = await oneWriterPerWorkspace(token.workspaceId, () => replaceUser(services, token, request.params.id, request.body));
        return send(reply, 200, userOf(saved));
      });

      scope.patch<WithId>('/Users/:id', async (request, reply) => {
        const token = tokenOf(request);
        const saved = await oneWriterPerWorkspace(token.workspaceId, async () => {
          const found = await readUser(services, token, request.params.id);
          const after = patchedUser(userOf(found), request.body);
          return replaceUser(services, token, request.params.id, after, 'record.scim_patched', found);
        });
        return send(reply, 200, userOf(saved));
      });

      scope.delete<WithId>('/Users/:id', async (request, reply) => {
        const token = tokenOf(request);
        await oneWriterPerWorkspace(token.workspaceId, () => deleteUser(services, token, request.params.id));
        return reply.code(204).send();
      });
    },
    { prefix: SCIM_PREFIX },
  );
}
