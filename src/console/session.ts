/**
 * Console sessions and CSRF. OWNED BY THE SIGN-IN HELPER: the signatures below are the
 * contract the plugin and the pages rely on; the bodies are to be written.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';

/** Security headers (helmet, CSP), cookie and urlencoded-form parsing, HTML error and 404 pages for the console scope. */
export async function registerConsoleSecurity(_scope: FastifyInstance, _services: Services): Promise<void> {
  // not written yet
}

/** preHandler: loads the session from the cookie into request.consoleAdmin/consoleSession, or redirects to sign-in. */
export function requireSession(_services: Services) {
  return async (_request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    await reply.code(503).send('console sign-in not written yet');
  };
}

/** preHandler: every POST must carry the session's token in `_csrf` (constant-time compare), else 403 and nothing changes. */
export async function requireCsrf(_request: FastifyRequest, _reply: FastifyReply): Promise<void> {
  // not written yet
}
