/**
 * The operator token (`WSOPS_OPERATOR_TOKEN`) that guards every route of the internal listener:
 * the domain actions, the record writes and the endpoint signatures. Refused entirely while no
 * token is configured; failed tokens are throttled per client address.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { type FailureThrottle, OPERATOR_FAILURE_LIMIT, OPERATOR_FAILURE_WINDOW_MS } from './failure-throttle.js';

/** What the check reads: the configured token, the failure budgets and the time. */
export interface OperatorCheckServices {
  config: Pick<Config, 'operatorToken'>;
  failureThrottle: FailureThrottle;
  clock: Clock;
}

const UNAUTHORIZED = 'The operator token was not accepted. Send Authorization: Bearer <WSOPS_OPERATOR_TOKEN>.';

/** Constant-time comparison whatever the lengths: both sides are hashed to 32 bytes first. */
export function operatorTokenMatches(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * Runs before the body is read: an unauthenticated caller learns nothing about its body. The
 * token is compared first and the outcome settled atomically with the address's budget
 * (failure-throttle.ts): once it is spent, every request from the address is 429, the right
 * token too, so a correct guess behind the 429s is worth nothing.
 */
export async function authorizeOperator(services: OperatorCheckServices, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const expected = services.config.operatorToken;
  if (expected === undefined) {
    throw new AppError('forbidden', 'The internal API is disabled until WSOPS_OPERATOR_TOKEN is set on the server.');
  }
  const header = request.headers.authorization;
  const m = typeof header === 'string' && header.length <= 1000 ? /^Bearer +(\S+) *$/i.exec(header) : null;
  const ok = m !== null && operatorTokenMatches(m[1] as string, expected);
  const budgets = [{ key: `operator:${request.ip}`, limit: OPERATOR_FAILURE_LIMIT, windowMs: OPERATOR_FAILURE_WINDOW_MS }];
  const gate = await services.failureThrottle.settle(budgets, !ok, services.clock());
  if (!gate.allowed) {
    reply.header('Retry-After', String(gate.retryAfter));
    throw new AppError(
      'rate_limited',
      `Too many failed operator tokens from this address; try again in ${gate.retryAfter} s (at most ${OPERATOR_FAILURE_LIMIT} failures per minute).`,
    );
  }
  if (!ok) throw new AppError('unauthorized', UNAUTHORIZED);
}
