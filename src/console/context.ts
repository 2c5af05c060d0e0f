/**
 * What every console page knows about the request: the signed-in admin, their workspace and
 * the session's CSRF token. Built by the session hook in plugin.ts; pages read it with
 * `pageContext(request)`.
 */
import type { FastifyRequest } from 'fastify';
import type { Services } from '../services.js';

export interface ConsoleAdmin {
  id: string;
  email: string;
  workspaceId: string;
  workspaceName: string;
}

export interface ConsoleSession {
  /** The session row's id (never the cookie value itself, which is only stored hashed). */
  id: string;
  /** Synchronizer token: every POST form carries it in the `_csrf` field. */
  csrfToken: string;
}

export interface PageContext {
  services: Services;
  admin: ConsoleAdmin;
  session: ConsoleSession;
  /** `console:<email>`: the actor recorded in the audit trail. */
  actor: string;
  /** The current path with its query string, for links back. */
  url: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    consoleAdmin?: ConsoleAdmin;
    consoleSession?: ConsoleSession;
  }
}

export function pageContext(services: Services, request: FastifyRequest): PageContext {
  const admin = request.consoleAdmin;
  const session = request.consoleSession;
  if (!admin || !session) throw new Error('console page reached without a session (the session hook must run first)');
  return { services, admin, session, actor: `console:${admin.email}`, url: request.url };
}
