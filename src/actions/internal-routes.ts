/**
 * The internal operator API: the domain actions over HTTP, for back-office tools. Not part of
 * the public API (not in the OpenAPI document) and served only by the internal listener
 * (`internal-app.ts`). Authenticated by the operator token (`WSOPS_OPERATOR_TOKEN`), refused
 * entirely while no token is configured, and failed tokens are throttled per client address.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { FailureThrottle } from '../guards/failure-throttle.js';
import { authorizeOperator } from '../guards/operator-token.js';
import { JSON_TYPE } from '../media-types.js';
import { idPattern, idRule } from '../registers/fields.js';
import type { Database } from '../store/database.js';
import { refuseUnsafeName } from '../text-rules.js';
import type { RecordStore } from '../writes/records.js';
import { actionByName } from './domain/index.js';

/** What this file takes of the services built at start (services.ts). */
export interface InternalRoutesServices {
  config: Config;
  database: Database;
  records: RecordStore;
  failureThrottle: FailureThrottle;
  clock: Clock;
}

export function registerInternalRoutes(app: FastifyInstance, services: InternalRoutesServices): void {
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
