/**
 * What the public and the internal listener share: the defences against slow and hostile
 * clients, and one answer for every error raised outside a route handler (by the HTTP parser,
 * the router, a body parser, or a missing route), always an RFC 9457 problem with the
 * listener's headers. Each listener adds its own routes and hooks; neither answers a body of
 * the framework's own.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyHttpOptions, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { randomBase62 } from '../ids.js';
import { learnAllowedMethods } from './allowed-methods.js';
import { frameworkErrorCode, problemErrorHandler, rawProblemResponse, sendProblem } from './problem.js';

export const requestId = () => `req_${randomBase62(20)}`;

/** Longer path segments are a 414: no id comes near it, and the router's work stays bounded. */
export const MAX_PATH_SEGMENT = 200;

export const MALFORMED_URL_DETAIL = 'The URL is not valid: a percent-escape is malformed or does not decode to UTF-8.';
const SEGMENT_TOO_LONG_DETAIL = `A path segment is longer than ${MAX_PATH_SEGMENT} characters; ids are much shorter.`;

/**
 * True when the query string holds a percent-escape that is malformed (`%ZZ`) or does not
 * decode to UTF-8 (`%FF`): the query parser would read it as garbled text, where the same in
 * the path is a 400. Only a query with a `%` is decoded, so the hot path pays an indexOf.
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

/** The headers every response of either listener carries, problems included. */
export function stampResponse(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('Request-Id', request.id);
  reply.header('Cache-Control', 'no-store');
  reply.header('X-Content-Type-Options', 'nosniff');
}

/**
 * Stamps the response and refuses a malformed query string; true when it answered. The first
 * thing each listener's onRequest hook does.
 */
export function stampOrRefuse(request: FastifyRequest, reply: FastifyReply): boolean {
  stampResponse(request, reply);
  if (!malformedQuery(request.url)) return false;
  sendProblem(reply, 'invalid_request', MALFORMED_URL_DETAIL);
  return true;
}

export interface ListenerOptions {
  /** Extra headers on a problem the router raises before any hook ran (the public API's Vary). */
  onFrameworkError?: (request: FastifyRequest, reply: FastifyReply) => void;
}

/**
 * The server's defences against slow and hostile clients: a whole-request deadline, a header
 * deadline, an inactivity deadline and a bounded keep-alive, checked often enough to hold
 * them (Node checks every connectionsCheckingInterval, 30 s by default). Errors the HTTP
 * parser raises before there is a request (431, a malformed request, 408) and those the router
 * raises before any hook (a malformed percent-escape in the path, an over-long segment) are
 * answered as problems too.
 */
export function serverOptions(config: Config, options: ListenerOptions = {}): FastifyHttpOptions<Server> {
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
    genReqId: requestId,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: MAX_PATH_SEGMENT },
    // request.ip, the client address of every throttle, allowlist, last use and log line: from
    // X-Forwarded-For only through WSOPS_TRUSTED_PROXIES (proxy-addr walks the hops back from
    // the peer and stops at the first untrusted one); without them the header is ignored.
    trustProxy: config.trustedProxies.length ? config.trustedProxies : false,
    frameworkErrors: (error, request, reply) => {
      stampResponse(request, reply);
      options.onFrameworkError?.(request, reply);
      const status = error.statusCode ?? 400;
      return sendProblem(reply, frameworkErrorCode(status), status === 414 ? SEGMENT_TOO_LONG_DETAIL : MALFORMED_URL_DETAIL);
    },
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

/**
 * The error and not-found handlers of a listener: a domain error as its problem, the
 * framework's client errors (bad JSON, content type, body too large) as a problem of their
 * status, a path served under other methods as `method_not_allowed` with `Allow`, a missing
 * route as `not_found` with `notFoundHint` after the method and path. Call it before any route.
 */
export function answerProblems(app: FastifyInstance, baseUrl: string, realm: string, notFoundHint: string): void {
  app.decorate('problemTypeBase', baseUrl);
  app.setErrorHandler(problemErrorHandler(realm));
  const allowedMethods = learnAllowedMethods(app);
  const noRoute = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = allowedMethods.on(path);
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return sendProblem(
        reply,
        'method_not_allowed',
        `${request.method} is not served on ${path.slice(0, 200)}; it takes ${allowed.join(', ')}.`,
      );
    }
    return sendProblem(reply, 'not_found', `No route ${request.method} ${path.slice(0, 200)}${notFoundHint}`);
  };
  // A method no route is declared with (QUERY, PROPFIND, ...) is answered before the body is
  // read: Fastify reads a body for some of them, and would refuse one sent without a
  // Content-Type with a 400 of its own before the not-found handler could say 405.
  app.addHook('onRequest', (request, reply, done) => {
    if (allowedMethods.declares(request.method)) return done();
    reply.header('Connection', 'close');
    noRoute(request, reply);
  });
  app.setNotFoundHandler(noRoute);
}
