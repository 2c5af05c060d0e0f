/**
 * What a developer reads from this deployment: the OpenAPI document (with an ETag, so tools
 * can cache it) and the error catalogue page that every problem `type` points at.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ERROR_CATALOGUE, ERRORS_PAGE_PATH } from '../errors.js';
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

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** Catalogue text marks code with backticks; everything else is text. */
const prose = (text: string) => escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');

export function errorsPage(): string {
  const rows = Object.entries(ERROR_CATALOGUE)
    .map(
      ([code, e]) => `<section id="${code}">
  <h2><code>${code}</code> <span class="status">${e.status} ${escapeHtml(e.title)}</span></h2>
  <p>${prose(e.meaning)}</p>
  <p><strong>How to fix it:</strong> ${prose(e.fix)}</p>
</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>wsops API errors</title></head>
<body>
<main>
<h1>wsops API errors</h1>
<p>Every error is an <code>application/problem+json</code> body (RFC 9457) with <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, a stable <code>code</code> listed below and the <code>request_id</code> of the request; also <code>param</code> on a 400 about one parameter, <code>missing_scope</code> on a 403 and <code>key_id</code> on a 429. The <code>type</code> is this page's address with the code as its fragment.</p>
<p>Reporting a problem: quote the <code>request_id</code> (also in the <code>Request-Id</code> response header). The API is described in <a href="/developers/openapi.json">the OpenAPI document</a>.</p>
${rows}
</main>
</body>
</html>
`;
}

export function registerDeveloperRoutes(app: FastifyInstance, services: Services): void {
  serveStatic(
    app,
    '/developers/openapi.json',
    'application/json; charset=utf-8',
    JSON.stringify(buildOpenApi(services.config.baseUrl), null, 2),
  );
  serveStatic(app, ERRORS_PAGE_PATH, 'text/html; charset=utf-8', errorsPage());
}
