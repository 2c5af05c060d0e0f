/**
 * The internal listener (`WSOPS_INTERNAL_PORT`, bound to `WSOPS_INTERNAL_HOST`): the operator
 * API `/internal/v1/*`, Prometheus `/metrics`, readiness `/readyz` and liveness `/healthz`. A
 * second Fastify instance, so none of this is reachable on the public listener (ADR 8). Errors
 * are the same RFC 9457 problems as the public API.
 */

import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { sql } from '#kysely';
import { registerInternalRoutes } from '../actions/internal-routes.js';
import { buildInternalOpenApi } from '../developers/internal-openapi.js';
import type { Logger } from '../logger.js';
import { JSON_TYPE } from '../media-types.js';
import type { Services } from '../services.js';
import { registerEndpointInternalRoutes } from '../webhooks/endpoints/endpoint-internal-routes.js';
import { registerRecordWriteRoutes } from '../writes/record-write-routes.js';
import { checkForwardedAddresses } from './forwarded-for.js';
import { answerProblems, serverOptions, stampOrRefuse } from './listener.js';
import { JSON_POISONING_REFUSED, refusePrototypeKeys } from './prototype-keys.js';

/** A dependency that does not answer within this is not ready. */
export const READINESS_TIMEOUT_MS = 1000;

export interface InternalAppOptions {
  logger?: Logger;
  readinessTimeoutMs?: number;
}

export interface ReadinessCheck {
  ok: boolean;
  latency_ms: number;
  error?: string;
}

async function timed(check: () => Promise<unknown>, timeoutMs: number): Promise<ReadinessCheck> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, latency_ms: Math.round(performance.now() - start) };
  } catch (err) {
    // The reason is for the operator reading /readyz; it never contains a credential (URLs are not echoed).
    return { ok: false, latency_ms: Math.round(performance.now() - start), error: (err as Error).message.slice(0, 200) };
  } finally {
    clearTimeout(timer);
  }
}

/** `SELECT 1` on the database and, when configured, PING on Redis, each within the timeout. */
export async function readiness(services: Services, timeoutMs = READINESS_TIMEOUT_MS): Promise<Record<string, ReadinessCheck>> {
  const checks: Record<string, Promise<ReadinessCheck>> = {
    database: timed(() => sql`SELECT 1`.execute(services.database.db), timeoutMs),
  };
  const redis = services.redis;
  if (redis) checks.redis = timed(() => redis.ping(), timeoutMs);
  // SELECT 1 answers on a full disk: writes failing for one (or for a lost connection) say so here.
  const fault = services.database.storage.current();
  if (fault) checks.storage = Promise.resolve({ ok: false, latency_ms: 0, error: fault.message.slice(0, 200) });
  const entries = await Promise.all(Object.entries(checks).map(async ([name, p]) => [name, await p] as const));
  return Object.fromEntries(entries);
}

export function buildInternalApp(services: Services, options: InternalAppOptions = {}): FastifyInstance {
  const app = Fastify({
    // The same defences against slow and hostile clients as the public listener, but for the
    // whole-request deadline: an import streams a body for as long as it takes (its socket
    // still closes after WSOPS_REQUEST_TIMEOUT_MS of silence, and headers keep their deadline).
    ...serverOptions(services.config),
    requestTimeout: 0,
    ...JSON_POISONING_REFUSED,
    loggerInstance: (options.logger ?? services.logger) as FastifyBaseLogger,
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
  });
  checkForwardedAddresses(app, services.config.trustedProxies);
  app.addHook('onRequest', (request, reply, done) => {
    if (!stampOrRefuse(request, reply)) done();
  });
  // Records, merge patches, actions and endpoint settings: no key naming the prototype reaches a handler.
  refusePrototypeKeys(app);
  services.metrics.instrument(app);
  answerProblems(
    app,
    services.config.baseUrl,
    'wsops-internal',
    ' on the internal listener: it serves the operations of /internal/openapi.json (/internal/v1/actions/{action}, /internal/v1/workspaces/{workspace_id}/{register}/{id}, /internal/v1/workspaces/{workspace_id}/import and /export, /internal/v1/workspaces/{workspace_id}/webhook-endpoints/{id}/signatures and /filter), /metrics, /readyz and /healthz.',
  );

  app.get('/healthz', async (_request, reply) => reply.type(JSON_TYPE).send('{"ok":true}'));
  app.get('/readyz', async (_request, reply) => {
    const checks = await readiness(services, options.readinessTimeoutMs);
    const ok = Object.values(checks).every((c) => c.ok);
    return reply
      .code(ok ? 200 : 503)
      .type(JSON_TYPE)
      .send(JSON.stringify({ ok, checks }));
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await services.metrics.text();
    return reply.type(services.metrics.contentType).send(text);
  });
  // The write side's description; it describes, it grants nothing, so it needs no token.
  let internalDocument: string | undefined;
  app.get('/internal/openapi.json', async (_request, reply) => {
    internalDocument ??= JSON.stringify(buildInternalOpenApi(services.config.baseUrl));
    return reply.type(JSON_TYPE).send(internalDocument);
  });
  registerInternalRoutes(app, services);
  registerRecordWriteRoutes(app, services);
  registerEndpointInternalRoutes(app, services);
  return app;
}
