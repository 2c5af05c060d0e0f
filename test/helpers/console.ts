/**
 * A console admin signed in through the real pages (one-time link → password → session
 * cookie), with helpers that send the cookie and the CSRF token like a browser form would.
 */

import { loadSession } from '../../src/sign-in/sessions.js';
import { createAdminLink } from '../../src/sign-in/sign-in-links.js';
import type { Harness } from './harness.js';

export interface PageResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  /** The Location header of a redirect ('' when none). */
  location: string;
}

export interface SignedInAdmin {
  /** `wsops_console=<token>`: the Cookie header value. */
  cookie: string;
  csrf: string;
  adminId: string;
  email: string;
  password: string;
  get(url: string, headers?: Record<string, string>): Promise<PageResponse>;
  /** POSTs a urlencoded form; `_csrf` is added unless the form sets it (set it to '' to omit it). */
  post(url: string, form?: Record<string, string | readonly string[]>, headers?: Record<string, string>): Promise<PageResponse>;
}

export const TEST_PASSWORD = 'correct horse battery staple';
let counter = 0;

/** URL-encodes a form, repeating a key for each value of an array (checkboxes). */
export function encodeForm(form: Record<string, string | readonly string[]>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
  return params.toString();
}

function toResponse(res: {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}): PageResponse {
  return { status: res.statusCode, headers: res.headers, body: res.body, location: String(res.headers.location ?? '') };
}

/** The value of the session cookie in a response's Set-Cookie headers, if it sets one. */
export function sessionCookieOf(headers: Record<string, string | string[] | number | undefined>): string | undefined {
  const raw = headers['set-cookie'];
  const all = Array.isArray(raw) ? raw : raw === undefined ? [] : [String(raw)];
  const line = all.find((c) => c.startsWith('wsops_console=') && !c.startsWith('wsops_console=;'));
  return line?.split(';')[0];
}

/** Adds an admin to the workspace (or reuses `email`), follows the link, sets a password, and returns the signed-in session. */
export async function signedInAdmin(harness: Harness, workspaceId: string, options: { email?: string } = {}): Promise<SignedInAdmin> {
  const email = options.email ?? `admin${++counter}-${Date.now()}@example.com`;
  const link = await createAdminLink(harness.services.database, {
    workspaceId,
    email,
    actor: 'cli',
    now: harness.clock(),
  });
  const res = await harness.app.inject({
    method: 'POST',
    url: `/console/link/${link.token}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: encodeForm({ password: TEST_PASSWORD, confirm: TEST_PASSWORD }),
  });
  const cookie = sessionCookieOf(res.headers);
  if (res.statusCode !== 303 || !cookie) throw new Error(`sign-in link refused: ${res.statusCode} ${res.body.slice(0, 300)}`);
  const loaded = await loadSession(harness.services.database.db, cookie.split('=')[1] ?? '', harness.clock());
  if (!loaded) throw new Error('session not found after sign-in');
  const csrf = loaded.session.csrfToken;
  return {
    cookie,
    csrf,
    adminId: link.admin.id,
    email: link.admin.email,
    password: TEST_PASSWORD,
    async get(url, headers = {}) {
      return toResponse(await harness.app.inject({ method: 'GET', url, headers: { cookie, ...headers } }));
    },
    async post(url, form = {}, headers = {}) {
      const body: Record<string, string | readonly string[]> = '_csrf' in form ? { ...form } : { _csrf: csrf, ...form };
      if (body._csrf === '') delete body._csrf;
      return toResponse(
        await harness.app.inject({
          method: 'POST',
          url,
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
          payload: encodeForm(body),
        }),
      );
    },
  };
}
