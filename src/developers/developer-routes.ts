/**
 * The OpenAPI document, with an ETag per representation (so tools can cache it) and in every
 * content coding the client accepts (static-documents.ts). The pages a developer reads,
 * including the error catalogue every problem `type` points at, are the portal (portal-routes.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { JSON_TYPE } from '../media-types.js';
import { buildOpenApi } from './openapi.js';
import { serveStaticDocument } from './static-documents.js';

/** What this file takes of the services built at start (services.ts). */
export interface DeveloperRoutesServices {
  config: Config;
}

export function registerDeveloperRoutes(app: FastifyInstance, services: DeveloperRoutesServices): void {
  serveStaticDocument(app, {
    path: '/developers/openapi.json',
    contentType: JSON_TYPE,
    body: JSON.stringify(buildOpenApi(services.config.baseUrl), null, 2),
    cacheControl: 'no-cache',
  });
}
