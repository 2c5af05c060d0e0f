/**
 * What every console page knows about the request: the signed-in admin, their workspace and
 * the session's CSRF token. Built by the session hook in plugin.ts; pages read it with
 * `pageContext(request)`.
 */
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { FailureThrottle } from '../guards/failure-throttle.js';
import type { Logger } from '../logger.js';
import type { SecretBox } from '../secret-box.js';
import type { Database } from '../store/database.js';

/**
 * What the console's pages use of the services built at start (ADR 44): the composition root
 * (plugin.ts) passes the whole `ConsoleServices`, which has these and more.
 */
export interface ConsoleServices {
  config: Config;
  database: Database;
  clock: Clock;
  secretBox: SecretBox;
  failureThrottle: FailureThrottle;
  logger: Logger;
}

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

/** A link of the console's main navigation: each feature's pages export theirs; console/plugin.ts lists them in order. */
export interface NavEntry {
  /** What a page names in `layout(ctx, { nav })` to be shown as the current one. */
  key: string;
  label: string;
  href: string;
}

export interface PageContext {
  services: ConsoleServices;
  /** The main navigation, as the console's composition root lists it. */
  nav: readonly NavEntry[];
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
    consoleNav?: readonly NavEntry[];
  }
}

export function pageContext(services: ConsoleServices, request: FastifyRequest): PageContext {
  const admin = request.consoleAdmin;
  const session = request.consoleSession;
  if (!admin || !session) throw new Error('console page reached without a session (the session hook must run first)');
  return { services, nav: request.consoleNav ?? [], admin, session, actor: `console:${admin.email}`, url: request.url };
}
