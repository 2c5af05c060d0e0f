/**
 * Console sessions and CSRF, and the console scope's security plumbing.
 *
 * - The session cookie holds a random 256-bit token; the server stores only its SHA-256 (the
 *   session id), so a database dump opens no session. `HttpOnly; SameSite=Lax; Path=/console`,
 *   `Secure` when the base URL is https.
 * - Every POST carries the session's synchronizer token in `_csrf`, compared in constant time.
 * - Only the cookie opens the console: the `Authorization` header is never read here, and the
 *   public API (outside this scope) parses no cookie at all.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConsoleServices } from '../console-kit/context.js';
import { formValue } from '../console-kit/forms.js';
import { messagePage, sendHtml } from '../console-kit/layout.js';
import { AppError } from '../errors.js';
import { controlCharacterIn, printable, refuseControlCharacters } from '../text-rules.js';
import { loadSession, type NewSession, SESSION_ABSOLUTE_MS } from './sessions.js';

export const SESSION_COOKIE = 'wsops_console';
/** Console forms are small; a larger body is refused before it is parsed. */
const FORM_BODY_LIMIT = 32 * 1024;

function isHttps(services: ConsoleServices): boolean {
  return services.config.baseUrl.startsWith('https:');
}

/** Security headers (helmet, CSP), cookie and urlencoded-form parsing, HTML error and 404 pages for the console scope. */
export async function registerConsoleSecurity(scope: FastifyInstance, services: ConsoleServices): Promise<void> {
  await scope.register(helmet, {
    global: true,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        fontSrc: ["'self'"],
        frameAncestors: ["'none'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'same-origin' },
    // HSTS over plain http would be ignored at best and confusing at worst.
    strictTransportSecurity: isHttps(services) ? { maxAge: 31_536_000, includeSubDomains: false } : false,
    crossOriginEmbedderPolicy: false,
    frameguard: { action: 'deny' },
  });
  await scope.register(cookie);
  await scope.register(formbody, { bodyLimit: FORM_BODY_LIMIT });

  // A request for another host name is refused on every console page: a site that rebinds its
  // own name to this server (DNS rebinding) reaches it with its own name in Host.
  scope.addHook('onRequest', async (request, reply) => {
    if (!hostAllowed(request.headers.host, services)) return sendHtml(reply, misdirectedPage(services), 421);
  });

  // A form posted from another site is refused before anything runs (defence in depth beside
  // SameSite=Lax and the CSRF token; it also covers the sign-in forms, which precede a session).
  scope.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'POST') return;
    const origin = request.headers.origin;
    // No Origin header: not a browser form post from another site (the CSRF token still applies).
    if (origin !== undefined && !sameOrigin(origin, services)) return sendHtml(reply, refusedPage(), 403);
  });

  // No path segment, query value or form field holds a control character (text-rules.ts):
  // refused before any query, so both databases answer alike (PostgreSQL cannot store NUL).
  scope.addHook('preValidation', async (request, reply) => {
    const refusal =
      controlCharacterRefusal(request.params, 'The path segment') ??
      controlCharacterRefusal(request.query, 'The query value') ??
      controlCharacterRefusal(request.body, 'The form field');
    if (refusal) return sendHtml(reply, messagePage('Request refused', `${refusal}. Nothing was changed.`, BACK), 400);
  });

  scope.setErrorHandler((error, request, reply) => {
    // A redirect that failed (a header value Node refused) must not leave its Location on the error page.
    reply.removeHeader('location');
    if (error instanceof AppError && error.code === 'not_found') {
      return sendHtml(reply, messagePage('Not found', error.message, { href: '/console', label: 'Back to the console' }), 404);
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const text =
        status === 413
          ? 'The form was too large to accept. Nothing was changed.'
          : `The request could not be understood (${(error as Error).message}). Nothing was changed.`;
      return sendHtml(reply, messagePage('Request refused', text, { href: '/console', label: 'Back to the console' }), status);
    }
    request.log.error({ err: error }, 'console error');
    return sendHtml(
      reply,
      messagePage('Something went wrong', `An internal error occurred. Quote this reference when reporting it: ${request.id}.`, {
        href: '/console',
        label: 'Back to the console',
      }),
      500,
    );
  });

  scope.setNotFoundHandler((request, reply) =>
    sendHtml(
      reply,
      messagePage('Page not found', `There is no console page at ${request.url.split('?')[0]?.slice(0, 200)}.`, {
        href: '/console',
        label: 'Go to the overview',
      }),
      404,
    ),
  );
}

const BACK = { href: '/console', label: 'Back to the console' };

/** Only WSOPS_BASE_URL's origin posts console forms; the request's own Host proves nothing. */
function sameOrigin(origin: string, services: ConsoleServices): boolean {
  if (origin === 'null') return false;
  try {
    return new URL(origin).origin === new URL(services.config.baseUrl).origin;
  } catch {
    return false;
  }
}

/**
 * The Host's name must be WSOPS_BASE_URL's; its port is not compared, since a reverse proxy
 * in front may pass on its own port.
 */
function hostAllowed(host: string | undefined, services: ConsoleServices): boolean {
  if (!host) return false;
  try {
    return new URL(`http://${host}`).hostname === new URL(services.config.baseUrl).hostname;
  } catch {
    return false;
  }
}

function misdirectedPage(services: ConsoleServices) {
  return messagePage(
    'Wrong address',
    `This console answers only at ${services.config.baseUrl}/console (WSOPS_BASE_URL). Nothing was changed.`,
    { href: `${services.config.baseUrl}/console`, label: 'Go to the console' },
  );
}

/** Why a parsed query or form holds a control character in a name or value, or undefined. */
function controlCharacterRefusal(values: unknown, what: string): string | undefined {
  if (typeof values !== 'object' || values === null) return undefined;
  for (const [name, value] of Object.entries(values)) {
    for (const one of [name, ...(Array.isArray(value) ? value : [value])]) {
      if (typeof one !== 'string' || controlCharacterIn(one) === undefined) continue;
      try {
        refuseControlCharacters(one, `${what} "${printableName(name)}"`);
      } catch (err) {
        return (err as Error).message;
      }
    }
  }
  return undefined;
}

/** A field name as it may be shown in an error: at most 40 characters, controls made visible. */
function printableName(name: string): string {
  return printable(name.slice(0, 40));
}

function refusedPage() {
  return messagePage(
    'Form refused',
    'This form did not come from this console page, or the page is too old. Nothing was changed. Go back, reload the page and try again.',
    { href: '/console', label: 'Back to the console' },
  );
}

/** Sets the session cookie after sign-in (a new token every time: no session fixation). */
export function setSessionCookie(reply: FastifyReply, services: ConsoleServices, session: NewSession): void {
  reply.setCookie(SESSION_COOKIE, session.token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/console',
    secure: isHttps(services),
    maxAge: Math.floor(SESSION_ABSOLUTE_MS / 1000),
  });
}

export function clearSessionCookie(reply: FastifyReply, services: ConsoleServices): void {
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'lax', path: '/console', secure: isHttps(services) });
}

/**
 * Only a path inside the console is a place to return to after sign-in: no open redirect.
 * Anything but printable ASCII is percent-encoded (a Location header may carry nothing else),
 * so a link with `next=/console/中` still signs in.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || !next) return '/console';
  const unsafe = next.includes('\\') || next.includes('//') || controlCharacterIn(next) !== undefined || /[\t\n\r]/.test(next);
  if (!/^\/console(?:[/?#]|$)/.test(next) || unsafe) return '/console';
  try {
    return next.replace(/[^\x21-\x7e]+/g, (run) => encodeURIComponent(run));
  } catch {
    return '/console'; // a lone surrogate cannot be encoded
  }
}

/** preHandler: loads the session from the cookie into request.consoleAdmin/consoleSession, or redirects to sign-in. */
export function requireSession(services: ConsoleServices) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const token = request.cookies[SESSION_COOKIE];
    const loaded = token ? await loadSession(services.database.db, token, services.clock()) : undefined;
    if (!loaded) {
      if (token) clearSessionCookie(reply, services);
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(safeNext(request.url))}` : '';
      await reply.code(303).header('cache-control', 'no-store').redirect(`/console/sign-in${next}`, 303);
      return;
    }
    // The password was right but the second factor is still owed: only its form opens.
    if (loaded.session.secondFactorPending) {
      const next = request.method === 'GET' ? `?next=${encodeURIComponent(safeNext(request.url))}` : '';
      await reply.code(303).header('cache-control', 'no-store').redirect(`${SECOND_FACTOR_PATH}${next}`, 303);
      return;
    }
    // The workspace requires a second factor and this admin has none: enrolment first.
    if (loaded.admin.mustEnrol && !/^\/console\/security(?:[/?]|$)/.test(request.url)) {
      await reply.code(303).header('cache-control', 'no-store').redirect(`${SECURITY_PATH}?enrol=required`, 303);
      return;
    }
    request.consoleSession = loaded.session;
    request.consoleAdmin = loaded.admin;
  };
}

/** Where a signed-in admin manages their second factor (and enrols when the workspace requires one). */
export const SECURITY_PATH = '/console/security';
/** Where the second factor is asked for after a right password. */
export const SECOND_FACTOR_PATH = '/console/sign-in/second-factor';

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** preHandler: every POST must carry the session's token in `_csrf` (constant-time compare), else 403 and nothing changes. */
export async function requireCsrf(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.method !== 'POST') return;
  const expected = request.consoleSession?.csrfToken;
  const given = formValue(request.body, '_csrf');
  // Comparing digests keeps the comparison constant-time whatever the lengths.
  if (!expected || !given || !timingSafeEqual(digest(given), digest(expected))) {
    await sendHtml(reply, refusedPage(), 403);
  }
}

/** Whether a request carries a valid session (for pages outside the authenticated scope). */
export async function currentSession(services: ConsoleServices, request: FastifyRequest) {
  const token = request.cookies[SESSION_COOKIE];
  return token ? loadSession(services.database.db, token, services.clock()) : undefined;
}
