import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { registerConsole } from '../console/plugin.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import { registerInternalRoutes } from './internal-routes.js';
import { buildOpenApi } from './openapi.js';
import { PROBLEM_CONTENT_TYPE, problem, sendProblem } from './problem.js';
import { registerReadRoutes } from './read-routes.js';

export interface AppOptions {
  /** Request-scoped logging goes through this logger (default: the services' logger). */
  logger?: Logger;
}

/** Builds the HTTP application without listening, so tests can use inject() and the CLI can listen. */
export function buildApp(services: Services, options: AppOptions = {}): FastifyInstance {
  const app = Fastify({
    loggerInstance: (options.logger ?? services.logger) as FastifyBaseLogger,
    genReqId: () => `req_${randomBase62(20)}`,
    bodyLimit: 64 * 1024,
    // The read API takes no body; bound the query string parser's work too.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Per-request log lines would cost more than the request on the hot path; errors are logged.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('Request-Id', request.id);
    reply.header('Cache-Control', 'no-store');
    reply.header('X-Content-Type-Options', 'nosniff');
  });

  app.setErrorHandler((error, request, reply) => {
    if (error instanceof AppError) {
      if (error.code === 'unauthorized') reply.header('WWW-Authenticate', 'Bearer realm="wsops"');
      return sendProblem(reply, error.code, error.message, error.extra);
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // Fastify's own client errors (malformed URL, bad content type, body too large...).
      const body = problem('invalid_request', (error as Error).message, String(request.id));
      return reply
        .code(status)
        .type(PROBLEM_CONTENT_TYPE)
        .send(JSON.stringify({ ...body, status }));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, 'internal_error', 'An internal error occurred; quote the request_id when reporting it.');
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      'not_found',
      `No route ${request.method} ${request.url.split('?')[0]?.slice(0, 200)}. See /developers/openapi.json.`,
    ),
  );

  const openapi = JSON.stringify(buildOpenApi(services.config.baseUrl), null, 2);
  app.get('/developers/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(openapi));
  app.get('/healthz', async (_request, reply) => reply.type('application/json; charset=utf-8').send('{"ok":true}'));

  registerReadRoutes(app, services);
  registerInternalRoutes(app, services);
  registerConsole(app, services);
  return app;
}
