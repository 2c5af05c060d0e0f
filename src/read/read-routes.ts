import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { FailureThrottle } from '../guards/failure-throttle.js';
import type { RateLimiter } from '../guards/rate-limit.js';
import { authenticateThrottled, type KeyContext, requireScope } from '../keys/auth.js';
import type { KeyCache } from '../keys/key-cache.js';
import type { UsageCounter } from '../keys/usage.js';
import { JSON_TYPE } from '../media-types.js';
import { REGISTERS } from '../registers/catalogue.js';
import type { Register } from '../registers/define.js';
import { idPattern } from '../registers/fields.js';
import type { Database, HotQueries } from '../store/database.js';
import type { RecordStore } from '../writes/records.js';
import { deletionsHandler } from './deletions.js';
import { type EventScopes, eventDetailHandler, eventsListHandler } from './events.js';
import type { CursorCodec } from './list-query.js';
import { filterDigest, parseListQuery, type RawQuery, rejectUnknown } from './list-query.js';
import type { PageReader } from './pages.js';

/** What this file takes of the services built at start (services.ts). */
export interface ReadRoutesServices {
  config: Config;
  database: Database;
  records: RecordStore;
  pages: PageReader;
  hot: HotQueries;
  keyCache: KeyCache;
  cursors: CursorCodec;
  rateLimiter: RateLimiter;
  failureThrottle: FailureThrottle;
  usage: UsageCounter;
  clock: Clock;
}

/**
 * The order of checks is part of the contract: the address's failed-authentication budget
 * (429), authentication (401), rate limit (429),
 * scope (403, also for an uninstalled module), parameters (400), then the module
 * (empty list / 404).
 */
async function admit(services: ReadRoutesServices, policy: string, request: FastifyRequest, reply: FastifyReply): Promise<KeyContext> {
  const ctx = await authenticateThrottled(services, request, reply);
  const now = services.clock();
  services.usage.count(ctx.workspaceId, ctx.keyId, now);
  const limiter = services.rateLimiter;
  const decision = await limiter.take(ctx.keyId, now);
  reply.header('RateLimit-Policy', policy);
  reply.header('RateLimit', `"per-key";r=${decision.remaining};t=${decision.resetSeconds}`);
  if (!decision.allowed) {
    reply.header('Retry-After', String(decision.retryAfter));
    throw new AppError(
      'rate_limited',
      `Key ${ctx.keyId} exceeded ${limiter.perSecond} requests per second (burst ${limiter.burst}); retry after ${decision.retryAfter} s.`,
      { key_id: ctx.keyId },
    );
  }
  return ctx;
}

/** The `RateLimit-Policy` header: the same on every response of a process. */
function ratePolicy(services: ReadRoutesServices): string {
  const limiter = services.rateLimiter;
  return `"per-key";q=${limiter.burst};w=${Math.ceil(limiter.burst / limiter.perSecond)}`;
}

function listHandler(services: ReadRoutesServices, register: Register, policy: string) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const ctx = await admit(services, policy, request, reply);
    requireScope(ctx, register.scope);
    const params = parseListQuery(register, request.query as RawQuery);
    const digest = filterDigest({
      ...params.filters,
      search: params.search.length ? params.search.join(' ') : undefined,
      updated_since: params.updatedSince,
    });
    const now = services.clock();
    const after = params.cursor
      ? services.cursors.decode(params.cursor, { workspaceId: ctx.workspaceId, register: register.path, digest, now })
      : undefined;
    if (!ctx.modules.has(register.module)) {
      return reply.type(JSON_TYPE).send('{"data":[],"has_more":false,"next_cursor":null}');
    }
    const page = await services.pages.read({
      workspaceId: ctx.workspaceId,
      register: register.path,
      filters: params.filters,
      searchWords: params.search,
      updatedSince: params.updatedSince,
      after,
      limit: params.limit,
      digest,
      issuedAt: now,
    });
    // Compressed, as the client asks, by the onSend hook (compression.ts).
    return reply.type(JSON_TYPE).send(page.body);
  };
}

function detailHandler(services: ReadRoutesServices, register: Register, policy: string) {
  return async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const ctx = await admit(services, policy, request, reply);
    requireScope(ctx, register.scope);
    rejectUnknown(request.query as RawQuery, []);
    const id = request.params.id;
    const notFound = new AppError('not_found', `No ${register.resource} with id "${id.slice(0, 60)}" in this workspace.`);
    // The exact id shape is checked before any query: an id is opaque to clients, so a malformed
    // one is simply not found, and bytes a database refuses (NUL) never reach it.
    if (!ctx.modules.has(register.module) || !idPattern(register.idPrefix).test(id)) throw notFound;
    const doc = await services.records.getDoc(ctx.workspaceId, register, id);
    if (doc === undefined) throw notFound;
    return reply.type(JSON_TYPE).send(doc);
  };
}

/** `eventScopes`: the events API's types and their scopes (read/events.ts). */
export function registerReadRoutes(app: FastifyInstance, services: ReadRoutesServices, eventScopes: EventScopes): void {
  const policy = ratePolicy(services);
  for (const register of REGISTERS) {
    app.get(`/api/v1/${register.path}`, listHandler(services, register, policy));
    // A static segment: the router prefers it to `:id`, and `deletions` is never an id (ids are `<prefix>_…`).
    app.get(
      `/api/v1/${register.path}/deletions`,
      deletionsHandler(services, register, (request, reply) => admit(services, policy, request, reply)),
    );
    app.get(`/api/v1/${register.path}/:id`, detailHandler(services, register, policy));
  }
  const admitted = (request: FastifyRequest, reply: FastifyReply) => admit(services, policy, request, reply);
  app.get('/api/v1/events', eventsListHandler(services, eventScopes, admitted));
  app.get('/api/v1/events/:id', eventDetailHandler(services, eventScopes, admitted));
  app.get('/api/v1/scopes', async (request, reply) => {
    const ctx = await admit(services, policy, request, reply);
    rejectUnknown(request.query as RawQuery, []);
    return reply.type(JSON_TYPE).send(
      JSON.stringify({
        key_id: ctx.keyId,
        environment: ctx.environment,
        workspace_id: ctx.workspaceId,
        scopes: ctx.scopes,
        expires_at: ctx.expiresAt,
      }),
    );
  });
}
