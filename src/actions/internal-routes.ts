/**
 * The internal operator API: the domain actions over HTTP, for back-office tools. Not part of
 * the public API (not in the OpenAPI document) and served only by the internal listener
 * (`internal-app.ts`). Authenticated by the operator token (`WSOPS_OPERATOR_TOKEN`), refused
 * entirely while no token is configured, and failed tokens are throttled per client address.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { OPERATOR_FAILURE_LIMIT, OPERATOR_FAILURE_WINDOW_MS } from '../keys/failure-throttle.js';
import { idPattern, idRule } from '../registers/fields.js';
import type { Services } from '../services.js';
import { refuseUnsafeName } from '../text-rules.js';
import { actionByName } from './domain/index.js';

const JSON_TYPE = 'application/json; charset=utf-8';

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
export async function authorizeOperator(services: Services, request: FastifyRequest, reply: FastifyReply): Promise<void> {
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

export function registerInternalRoutes(app: FastifyInstance, services: Services): void {
  app.post<{ Params: { action: string } }>(
    '/internal/v1/actions/:action',
    {
      onRequest: async (request, reply) => authorizeOperator(services, request, reply),
    },
    async (request, reply) => {
      refuseUnsafeName(request.params.action, 'the action name');
      const action = actionByName(request.params.action);
      const body = request.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new AppError('invalid_request', 'The body must be a JSON object: {"workspace_id": "wsp_...", ...arguments}.');
      }
      const { workspace_id: workspaceId, ...args } = body as Record<string, unknown>;
      // The exact id shape, checked before any query (a NUL byte would make PostgreSQL fail).
      if (typeof workspaceId !== 'string' || !idPattern('wsp').test(workspaceId)) {
        throw new AppError('invalid_parameter', `workspace_id is required: the id of the workspace to act in, ${idRule('wsp')}`, {
          param: 'workspace_id',
        });
      }
      // No argument name or value carries a control or text-direction character (text-rules.ts):
      // they end up in messages, the audit trail and operators' terminals.
      for (const [name, value] of Object.entries(args)) {
        refuseUnsafeName(name, 'an argument name');
        if (typeof value === 'string') refuseUnsafeName(value, `the argument ${name}`, name);
      }
      const result = await action.run(services, workspaceId, args, { actor: 'operator' });
      return reply.code(200).type(JSON_TYPE).send(JSON.stringify(result));
    },
  );
}
