/**
 * The internal operator API: the domain actions over HTTP, for back-office tools. Not part of
 * the public API (not in the OpenAPI document) and served only by the internal listener
 * (`internal-app.ts`). Authenticated by the operator token (`WSOPS_OPERATOR_TOKEN`), refused
 * entirely while no token is configured, and failed tokens are throttled per client address.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { actionByName } from '../actions/domain/index.js';
import { AppError } from '../errors.js';
import { ID_PATTERN_BODY } from '../registers/fields.js';
import type { Services } from '../services.js';
import { OPERATOR_FAILURE_LIMIT } from './failure-throttle.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const WORKSPACE_ID = new RegExp(`^wsp_${ID_PATTERN_BODY}$`);

const UNAUTHORIZED = 'The operator token was not accepted. Send Authorization: Bearer <WSOPS_OPERATOR_TOKEN>.';

/** Constant-time comparison whatever the lengths: both sides are hashed to 32 bytes first. */
export function operatorTokenMatches(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * Runs before the body is read: an unauthenticated caller learns nothing about its body. An
 * address that failed too often is refused before its token is even compared, so a correct
 * guess behind the 429s is worth nothing.
 */
export async function authorizeOperator(services: Services, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const expected = services.config.operatorToken;
  if (expected === undefined) {
    throw new AppError('forbidden', 'The internal API is disabled until WSOPS_OPERATOR_TOKEN is set on the server.');
  }
  const now = services.clock();
  const wait = await services.operatorThrottle.blockedFor(request.ip, now);
  if (wait > 0) {
    reply.header('Retry-After', String(wait));
    throw new AppError(
      'rate_limited',
      `Too many failed operator tokens from this address; try again in ${wait} s (after ${OPERATOR_FAILURE_LIMIT} failures per minute).`,
    );
  }
  const header = request.headers.authorization;
  const m = typeof header === 'string' && header.length <= 1000 ? /^Bearer +(\S+) *$/i.exec(header) : null;
  if (!m || !operatorTokenMatches(m[1] as string, expected)) {
    await services.operatorThrottle.failed(request.ip, now);
    throw new AppError('unauthorized', UNAUTHORIZED);
  }
}

export function registerInternalRoutes(app: FastifyInstance, services: Services): void {
  app.post<{ Params: { action: string } }>(
    '/internal/v1/actions/:action',
    {
      onRequest: async (request, reply) => authorizeOperator(services, request, reply),
    },
    async (request, reply) => {
      const action = actionByName(request.params.action);
      const body = request.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new AppError('invalid_request', 'The body must be a JSON object: {"workspace_id": "wsp_...", ...arguments}.');
      }
      const { workspace_id: workspaceId, ...args } = body as Record<string, unknown>;
      // The exact id shape, checked before any query (a NUL byte would make PostgreSQL fail).
      if (typeof workspaceId !== 'string' || !WORKSPACE_ID.test(workspaceId)) {
        throw new AppError(
          'invalid_parameter',
          'workspace_id is required: the id of the workspace to act in, wsp_ followed by letters and digits',
          {
            param: 'workspace_id',
          },
        );
      }
      const result = await action.run(services, workspaceId, args, { actor: 'operator' });
      return reply.code(200).type(JSON_TYPE).send(JSON.stringify(result));
    },
  );
}
