import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { registerConsole } from '../console/plugin.js';
import { registerDeveloperRoutes } from '../developers/developer-routes.js';
import { registerPortalRoutes } from '../developers/portal-routes.js';
import { type Logger, lazyChildLogger } from '../logger.js';
import { JSON_TYPE } from '../media-types.js';
import { registerReadRoutes } from '../read/read-routes.js';
import { invalidSyntax } from '../scim/errors.js';
import { registerScimRoutes, SCIM_PREFIX } from '../scim/routes.js';
import type { Services } from '../services.js';
import { EVENT_TYPES, SUBSCRIBABLE_EVENTS } from '../webhooks/events/event-types.js';
import { compressResponses, varyOnAcceptEncoding } from './compression.js';
import { checkForwardedAddresses } from './forwarded-for.js';
import { answerProblems, serverOptions, stampOrRefuse } from './listener.js';
import { sendProblem } from './problem.js';
import { JSON_POISONING_REFUSED, refusePrototypeKeys } from './prototype-keys.js';

export interface AppOptions {
  /** Request-scoped logging goes through this logger (default: the services' logger). */
  logger?: Logger;
}

/**
 * Whether a request URL's path is `prefix` or lies under it, the query ignored: `/api/v1`,
 * `/api/v1/assets` and `/api/v1?x` are under `/api/v1`; `/api/v10` is not. `prefix` has no
 * trailing slash. It runs on every request, so it reads characters rather than splitting.
 */
function pathUnder(url: string, prefix: string): boolean {
  if (!url.startsWith(prefix)) return false;
  const next = url.charCodeAt(prefix.length);
  return Number.isNaN(next) || next === 0x2f /* / */ || next === 0x3f /* ? */;
}

/** `/api/v1` itself, or anything under it (path or query): responses compressed and varied on Accept-Encoding. */
const isApiRequest = (url: string) => pathUnder(url, '/api/v1');

/**
 * Paths that take a request body: the console's small form posts. Every other path is
 * read-only: any method but GET and HEAD is refused before a body byte is read. SCIM (identity
 * providers' writes of people) takes bodies too. (The operator API takes bodies too, but it lives
 * on the internal listener.)
 */
export const BODY_PATH_PREFIXES: readonly string[] = ['/console', '/scim/v2'];

function takesBody(url: string): boolean {
  return BODY_PATH_PREFIXES.some((p) => pathUnder(url, p));
}

/** Where GET routes live: a write there is a 405; anywhere else there is nothing (404). */
const READ_PATH_PREFIXES: readonly string[] = ['/api/v1', '/developers', '/healthz'];

function servesReads(url: string): boolean {
  return READ_PATH_PREFIXES.some((p) => pathUnder(url, p));
}

/** The events API's types and the read scope each needs (read/events.ts), from the event catalogue. */
const EVENT_SCOPES = Object.fromEntries(SUBSCRIBABLE_EVENTS.map((t) => [t, EVENT_TYPES[t].scope]));

/** Builds the HTTP application without listening, so tests can use inject() and the CLI can listen. */
export function buildApp(services: Services, options: AppOptions = {}): FastifyInstance {
  const app = Fastify({
    // Problems raised by the router before any hook carry the API's Vary too.
    ...serverOptions(services.config, {
      onFrameworkError: (request, reply) => {
        if (isApiRequest(request.url)) varyOnAcceptEncoding(reply);
      },
    }),
    ...JSON_POISONING_REFUSED,
    loggerInstance: (options.logger ?? services.logger) as FastifyBaseLogger,
    childLoggerFactory: (logger, bindings, childOptions) => lazyChildLogger(logger as Logger, bindings, childOptions),
    // Per-request log lines would cost more than the request on the hot path; errors are logged.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
  });

  // First of the hooks: nothing reads request.ip before X-Forwarded-For is checked.
  checkForwardedAddresses(app, services.config.trustedProxies);
  app.server.maxConnections = services.config.maxConnections;

  // A callback hook, not an async one: it runs on every request and needs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    if (stampOrRefuse(request, reply)) return;
    if (request.method === 'GET' || request.method === 'HEAD' || takesBody(request.url)) return done();
    // Answered before the body is read; closing the connection drops whatever body follows.
    reply.header('Connection', 'close');
    if (!servesReads(request.url)) {
      sendProblem(reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]?.slice(0, 200)}.`);
      return;
    }
    reply.header('Allow', 'GET, HEAD');
    sendProblem(reply, 'method_not_allowed', 'The API is read-only: every operation is a GET.');
  });
  // Console forms and SCIM bodies: no key naming the prototype reaches a handler.
  refusePrototypeKeys(app, (detail, request) => (pathUnder(request.url, SCIM_PREFIX) ? invalidSyntax(detail) : undefined));

  // Metrics per route pattern; /internal/v1 and /metrics live on the internal listener only (internal-app.ts).
  services.metrics.instrument(app);
  // Content coding of /api/v1 responses as Accept-Encoding asks (compression.ts; the OpenAPI document compresses itself).
  app.addHook('onSend', compressResponses(isApiRequest));

  answerProblems(app, services.config.baseUrl, 'wsops', '. See /developers/openapi.json.');

  registerDeveloperRoutes(app, services);
  registerPortalRoutes(app, services);
  app.get('/healthz', async (_request, reply) => reply.type(JSON_TYPE).send('{"ok":true}'));

  registerReadRoutes(app, services, EVENT_SCOPES);
  registerScimRoutes(app, services);
  registerConsole(app, services);
  return app;
}
