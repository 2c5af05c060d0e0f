import type { FastifyReply } from 'fastify';
import { ERROR_CATALOGUE, type ErrorCode, problemType } from '../errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

declare module 'fastify' {
  interface FastifyInstance {
    /** The deployment's base URL: problem `type`s resolve to its error catalogue page. */
    problemTypeBase: string;
  }
}

/** RFC 9457 problem details with wsops's stable `code` and the request id. */
export function problem(code: ErrorCode, detail: string, requestId: string, typeBase: string, extra: Record<string, unknown> = {}) {
  const { status, title } = ERROR_CATALOGUE[code];
  return { type: problemType(code, typeBase), title, status, detail, code, request_id: requestId, ...extra };
}

export function sendProblem(reply: FastifyReply, code: ErrorCode, detail: string, extra: Record<string, unknown> = {}) {
  const body = problem(code, detail, String(reply.request.id), reply.server.problemTypeBase, extra);
  return reply.code(body.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}

/** The single 401 answer: no reason is ever distinguished. */
export const UNAUTHORIZED_DETAIL =
  'The API key was not accepted. Send Authorization: Bearer svc_sk_<env>_<key_id>_<secret> with a valid, unexpired, unrevoked key of this environment.';
