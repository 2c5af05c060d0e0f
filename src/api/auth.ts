import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { ALWAYS_INSTALLED } from '../registers/define.js';
import type { Services } from '../services.js';
import { findKeyForAuth, parseKey, secretMatches, touchKey } from '../store/keys.js';
import { UNAUTHORIZED_DETAIL } from './problem.js';

export interface KeyContext {
  keyId: string;
  workspaceId: string;
  environment: string;
  scopes: readonly string[];
  expiresAt: string;
  modules: ReadonlySet<string>;
}

/** Last use is recorded coarsely: at most one write per key per this interval. */
const LAST_USE_RESOLUTION_MS = 60_000;

const refused = () => new AppError('unauthorized', UNAUTHORIZED_DETAIL);

/**
 * Authenticates `Authorization: Bearer <key>`; nothing else is read (no cookies, no query
 * parameter). Every refusal is the same error so no reason leaks.
 */
export async function authenticate(services: Services, request: FastifyRequest): Promise<KeyContext> {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || header.length > 200) throw refused();
  const m = /^Bearer +(\S+) *$/i.exec(header);
  if (!m) throw refused();
  const parsed = parseKey(m[1] as string);
  if (!parsed) throw refused();
  const row = await findKeyForAuth(services.hot, parsed.keyId);
  const now = services.clock();
  // The hash comparison runs whether or not the key exists, so timing says nothing either.
  const secretOk = secretMatches(parsed.secret, row?.secret_hash);
  if (
    !row ||
    !secretOk ||
    row.environment !== parsed.environment ||
    parsed.environment !== services.config.env ||
    row.revoked_at !== null ||
    Date.parse(row.expires_at) <= now
  ) {
    throw refused();
  }
  if (row.last_used_at === null || now - Date.parse(row.last_used_at) >= LAST_USE_RESOLUTION_MS) {
    touchKey(services.database.db, row.key_id, new Date(now).toISOString()).catch((err: unknown) =>
      request.log.warn({ err, key_id: row.key_id }, 'could not record last use'),
    );
  }
  return {
    keyId: row.key_id,
    workspaceId: row.workspace_id,
    environment: row.environment,
    scopes: row.scopes.split(' '),
    expiresAt: row.expires_at,
    modules: new Set([...ALWAYS_INSTALLED, ...row.modules.split(' ').filter(Boolean)]),
  };
}

export function requireScope(ctx: KeyContext, scope: string): void {
  if (!ctx.scopes.includes(scope)) {
    throw new AppError(
      'missing_scope',
      `This key lacks the scope ${scope}, which this endpoint requires. Create a key that holds ${scope}.`,
      {
        missing_scope: scope,
      },
    );
  }
}
