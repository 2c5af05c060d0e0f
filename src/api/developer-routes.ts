/**
 * The OpenAPI document (with an ETag, so tools can cache it). The pages a developer reads,
 * including the error catalogue every problem `type` points at, are the portal (portal-routes.ts).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { buildOpenApi } from './openapi.js';

/** A weak comparison is right here: the body is identical byte for byte for a given ETag. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

function serveStatic(app: FastifyInstance, path: string, contentType: string, body: string): void {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  app.get(path, async (request, reply) => {
    reply.header('etag', etag).header('cache-control', 'no-cache');
    if (matches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    return reply.type(contentType).send(body);
  });
}

export function registerDeveloperRoutes(app: FastifyInstance, services: Services): void {
  serveStatic(
    app,
    '/developers/openapi.json',
    'application/json; charset=utf-8',
    JSON.stringify(buildOpenApi(services.config.baseUrl), null, 2),
  );
}
