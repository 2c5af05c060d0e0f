import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CATALOGUE, type ErrorCode, problemType } from '../errors.js';
import { STORAGE_RETRY_AFTER_SECONDS, storageFaultOf } from '../store/storage-faults.js';

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

/**
 * The same problem as a whole raw HTTP/1.1 response, for errors the HTTP parser raises before
 * there is a request object (headers too large, malformed request line, request timeout).
 * The connection is closed after it: the parser cannot resynchronise.
 */
export function rawProblemResponse(code: ErrorCode, detail: string, requestId: string, typeBase: string): string {
  const body = JSON.stringify(problem(code, detail, requestId, typeBase));
  const { status } = ERROR_CATALOGUE[code];
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    `Request-Id: ${requestId}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** The problem code for a 4xx that Fastify itself raised (parsing, limits, routing). */
export function frameworkErrorCode(status: number): ErrorCode {
  switch (status) {
    case 408:
      return 'request_timeout';
    case 413:
      return 'payload_too_large';
    case 414:
      return 'uri_too_long';
    case 415:
      return 'unsupported_media_type';
    case 431:
      return 'header_fields_too_large';
    default:
      return 'invalid_request';
  }
}

/**
 * The error handler of both listeners: a domain error as its problem, Fastify's own client
 * errors (bad content type, body too large...) as a problem of their status, anything else as
 * a logged 500 that says nothing of its cause.
 */
export function problemErrorHandler(realm: string) {
  return (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) {
      if (error.code === 'unauthorized') reply.header('WWW-Authenticate', `Bearer realm="${realm}"`);
      if (error.status === 503) {
        request.log.error({ err: error.cause ?? error, code: error.code }, error.message);
        reply.header('Retry-After', String(STORAGE_RETRY_AFTER_SECONDS));
      }
      return sendProblem(reply, error.code, error.message, error.extra);
    }
    // A full disk or a lost database is said as such (in the log too), never as an internal error.
    const fault = storageFaultOf(error);
    if (fault) {
      request.log.error({ err: error, reason: fault.reason }, fault.message);
      reply.header('Retry-After', String(STORAGE_RETRY_AFTER_SECONDS));
      return sendProblem(reply, fault.code, fault.message);
    }
    const status = (error as { statusCode?: number }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      const body = problem(frameworkErrorCode(status), error.message, String(request.id), request.server.problemTypeBase);
      return reply
        .code(status)
        .type(PROBLEM_CONTENT_TYPE)
        .send(JSON.stringify({ ...body, status }));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, 'internal_error', 'An internal error occurred; quote the request_id when reporting it.');
  };
}
