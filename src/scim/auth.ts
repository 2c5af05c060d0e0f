/**
 * Who a SCIM request is: `Authorization: Bearer svc_scim_...`, nothing else. Refusals are one
 * answer for every reason, behind the same failed-authentication budget per client address as
 * API keys (a guesser gains nothing by switching credential kind), and a valid token is held to
 * the same per-credential request rate as an API key.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { FailureThrottle } from '../guards/failure-throttle.js';
import type { RateLimiter } from '../guards/rate-limit.js';
import { addressBucket } from '../guards/rate-limit.js';
import type { Database } from '../store/database.js';
import { ScimError } from './errors.js';
import { findScimToken, type ScimTokenEntry, touchScimToken } from './tokens.js';

/** What this file takes of the services built at start (services.ts). */
export interface ScimAuthServices {
  config: Config;
  database: Database;
  rateLimiter: RateLimiter;
  failureThrottle: FailureThrottle;
  clock: Clock;
}

const REFUSED =
  'The SCIM token was not accepted. Send Authorization: Bearer svc_scim_... with a valid, unrevoked token of this workspace (API keys are not accepted here).';

function tokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || header.length > 200) return undefined;
  return /^Bearer +(\S+) *$/i.exec(header)?.[1];
}

export async function authenticateScim(services: ScimAuthServices, request: FastifyRequest, reply: FastifyReply): Promise<ScimTokenEntry> {
  const text = tokenOf(request);
  const now = services.clock();
  const entry = text === undefined ? undefined : await findScimToken(services.database.db, text, services.config.env, now);
  const failures = services.config.authFailuresPerMinute;
  const budgets = [{ key: `api:${addressBucket(request.ip)}`, limit: failures, windowMs: 60_000 }];
  const gate = await services.failureThrottle.settle(budgets, entry === undefined, now);
  if (!gate.allowed) {
    reply.header('Retry-After', String(gate.retryAfter));
    throw new ScimError(
      429,
      `Too many failed authentications from this address (at most ${failures} per minute); every request from it is refused for ${gate.retryAfter} s.`,
    );
  }
  if (!entry) {
    reply.header('WWW-Authenticate', 'Bearer realm="wsops-scim"');
    throw new ScimError(401, REFUSED);
  }
  const rate = await services.rateLimiter.take(`scim:${entry.tokenId}`, now);
  if (!rate.allowed) {
    reply.header('Retry-After', String(rate.retryAfter));
    throw new ScimError(
      429,
      `Token ${entry.tokenId} sent more than ${services.rateLimiter.perSecond} requests a second; retry after ${rate.retryAfter} s.`,
    );
  }
  touchScimToken(services.database.db, entry, now).catch((err: unknown) =>
    request.log.warn({ err, token_id: entry.tokenId }, 'could not record the SCIM token last use'),
  );
  return entry;
}
