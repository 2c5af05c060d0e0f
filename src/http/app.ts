import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyBaseLogger, type FastifyHttpOptions, type FastifyInstance, LogController } from 'fastify';
import type { Config } from '../config.js';

import { registerConsole } from '../console/plugin.js';
import { registerDeveloperRoutes } from '../developers/developer-routes.js';
import { registerPortalRoutes } from '../developers/portal-routes.js';
import { randomBase62 } from '../ids.js';
import { type Logger, lazyChildLogger } from '../logger.js';
import { registerReadRoutes } from '../read/read-routes.js';
import type { Services } from '../services.js';
import { compressResponses, varyOnAcceptEncoding } from './compression.js';
import { checkForwardedAddresses } from './forwarded-for.js';
import { frameworkErrorCode, problemErrorHandler, rawProblemResponse, sendProblem } from './problem.js';

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
 * read-only: any method but GET and HEAD is refused before a body byte is read. (The operator
 * API takes bodies too, but it lives on the internal listener.)
 */
export const BODY_PATH_PREFIXES: readonly string[] = ['/console'];

function takesBody(url: string): boolean {
  return BODY_PATH_PREFIXES.some((p) => pathUnder(url, p));
}

/** Where GET routes live: a write there is a 405; anywhere else there is nothing (404). */
const READ_PATH_PREFIXES: readonly string[] = ['/api/v1', '/developers', '/healthz'];

function servesReads(url: string): boolean {
  return READ_PATH_PREFIXES.some((p) => pathUnder(url, p));
}

const requestId = () => `req_${randomBase62(20)}`;

const MALFORMED_URL_DETAIL = 'The URL is not valid: a percent-escape is malformed or does not decode to UTF-8.';

/**
 * True when the query string holds a percent-escape that is malformed (`%ZZ`) or does not
 * decode to UTF-8 (`%FF`): the query parser would read it as garbled text, where the same in
 * the path is a 400 (issue 27). Only a query with a `%` is decoded, so the hot path pays an
 * indexOf.
 */
function malformedQuery(url: string): boolean {
  const q = url.indexOf('?');
  if (q === -1 || url.indexOf('%', q) === -1) return false;
  try {
    decodeURIComponent(url.slice(q + 1));
    return false;
  } catch {
    return true;
  }
}

/**
 * The server's defences against slow and hostile clients: a whole-request deadline, a header
 * deadline, an inactivity deadline and a bounded keep-alive, checked often enough to hold
 * them (Node checks every connectionsCheckingInterval, 30 s by default). Errors the HTTP
 * parser raises before there is a request (431, a malformed request, 408) are answered as
 * problems too.
 */
export function serverOptions(config: Config): FastifyHttpOptions<Server> {
  return {
    requestTimeout: config.requestTimeoutMs,
    // Inactivity: a little beyond the request deadline, so a stalled request gets its 408 first.
    connectionTimeout: config.requestTimeoutMs + 2000,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.headersTimeoutMs / 2))),
    },
    bodyLimit: 64 * 1024,
    // request.ip, the client address of every throttle, allowlist, last use and log line: from
    // X-Forwarded-For only through WSOPS_TRUSTED_PROXIES (proxy-addr walks the hops back from
    // the peer and stops at the first untrusted one); without them the header is ignored.
    trustProxy: config.trustedProxies.length ? config.trustedProxies : false,
    clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket) {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const [code, detail] =
        err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? ([
              'request_timeout',
              `The request was not received within ${config.requestTimeoutMs} ms; send headers and body promptly.`,
            ] as const)
          : err.code === 'HPE_HEADER_OVERFLOW'
            ? (['header_fields_too_large', 'The request line and headers exceed 16 KB; send a shorter URL or fewer headers.'] as const)
            : (['invalid_request', 'The request is not well-formed HTTP/1.1.'] as const);
      if (socket.writable) socket.write(rawProblemResponse(code, detail, requestId(), config.baseUrl));
      socket.destroy();
    },
  };
}

/** Builds the HTTP application without listening, so tests can use inject() and the CLI can listen. */
export function buildApp(services: Services, options: AppOptions = {}): FastifyInstance {
  const app = Fastify({
    ...serverOptions(services.config),
    loggerInstance: (options.logger ?? services.logger) as FastifyBaseLogger,
    genReqId: requestId,
    childLoggerFactory: (logger, bindings, childOptions) => lazyChildLogger(logger as Logger, bindings, childOptions),
    // Malformed URLs and over-long path parameters, raised by the router before any hook.
    frameworkErrors: (error, request, reply) => {
      reply.header('Request-Id', request.id);
      reply.header('Cache-Control', 'no-store');
      reply.header('X-Content-Type-Options', 'nosniff');
      if (isApiRequest(request.url)) varyOnAcceptEncoding(reply);
      const status = error.statusCode ?? 400;
      const detail = status === 414 ? 'A path segment is longer than 200 characters; ids are much shorter.' : MALFORMED_URL_DETAIL;
      return sendProblem(reply, frameworkErrorCode(status), detail);
    },
    // The read API takes no body; bound the query string parser's work too.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Per-request log lines would cost more than the request on the hot path; errors are logged.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
  });

  app.decorate('problemTypeBase', services.config.baseUrl);
  // First of the hooks: nothing reads request.ip before X-Forwarded-For is checked.
  checkForwardedAddresses(app, services.config.trustedProxies);
  app.server.maxConnections = services.config.maxConnections;

  // A callback hook, not an async one: it runs on every request and needs no promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('Request-Id', request.id);
    reply.header('Cache-Control', 'no-store');
    reply.header('X-Content-Type-Options', 'nosniff');
    if (malformedQuery(request.url)) {
      sendProblem(reply, 'invalid_request', MALFORMED_URL_DETAIL);
      return;
    }
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

  // Metrics per route pattern; /internal/v1 and /metrics live on the internal listener only (internal-app.ts).
  services.metrics.instrument(app);
  // Content coding of /api/v1 responses as Accept-Encoding asks (compression.ts; the OpenAPI document compresses itself).
  app.addHook('onSend', compressResponses(isApiRequest));

  app.setErrorHandler(problemErrorHandler('wsops'));

  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      'not_found',
      `No route ${request.method} ${request.url.split('?')[0]?.slice(0, 200)}. See /developers/openapi.json.`,
    ),
  );

  registerDeveloperRoutes(app, services);
  registerPortalRoutes(app, services);
  app.get('/healthz', async (_request, reply) => reply.type('application/json; charset=utf-8').send('{"ok":true}'));

  registerReadRoutes(app, services);
  registerConsole(app, services);
  return app;
}
