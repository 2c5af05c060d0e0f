/**
 * SCIM's error answer (RFC 7644 §3.12): `urn:ietf:params:scim:api:messages:2.0:Error` with
 * `status` (a string), `scimType` where the RFC has one, and `detail`. Every failure under
 * /scim/v2 is answered in this shape, whatever raised it.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { STORAGE_RETRY_AFTER_SECONDS, storageFaultOf } from '../store/storage-faults.js';

export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

export class ScimError extends Error {
  constructor(
    readonly status: number,
    detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail);
    this.name = 'ScimError';
  }
}

export const invalidValue = (detail: string) => new ScimError(400, detail, 'invalidValue');
export const invalidSyntax = (detail: string) => new ScimError(400, detail, 'invalidSyntax');
export const invalidFilter = (detail: string) => new ScimError(400, detail, 'invalidFilter');
export const invalidPath = (detail: string) => new ScimError(400, detail, 'invalidPath');
export const notFound = (detail: string) => new ScimError(404, detail);

/**
 * What a reply body of an error is: exactly RFC 7644's members, so a client that validates
 * errors against the RFC takes it. The request's id, which lets an operator find the log line,
 * travels in the X-Request-Id header instead (sendError).
 */
function errorBody(status: number, detail: string, scimType: ScimType | undefined): string {
  return JSON.stringify({ schemas: [ERROR_SCHEMA], status: String(status), ...(scimType ? { scimType } : {}), detail });
}

export function sendError(reply: FastifyReply, status: number, detail: string, scimType?: ScimType) {
  return reply
    .code(status)
    .header('X-Request-Id', String(reply.request.id))
    .type(SCIM_CONTENT_TYPE)
    .send(errorBody(status, detail, scimType));
}

/** A write refused by the register's validation: its first problem, named by JSON pointer, as invalidValue. */
function fromAppError(reply: FastifyReply, error: AppError) {
  if (error.code === 'unauthorized') reply.header('WWW-Authenticate', 'Bearer realm="wsops-scim"');
  if (error.code === 'invalid_record') return sendError(reply, 400, error.message, 'invalidValue');
  const status = error.status;
  return sendError(reply, status, error.message, status === 400 ? 'invalidValue' : undefined);
}

export function scimErrorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ScimError) return sendError(reply, error.status, error.message, error.scimType);
  if (error instanceof AppError) {
    if (error.status === 503) {
      request.log.error({ err: error.cause ?? error, code: error.code }, error.message);
      reply.header('Retry-After', String(STORAGE_RETRY_AFTER_SECONDS));
    }
    return fromAppError(reply, error);
  }
  // A full disk or a lost database is a 503 saying so, as on every other write path.
  const fault = storageFaultOf(error);
  if (fault) {
    request.log.error({ err: error, reason: fault.reason }, fault.message);
    reply.header('Retry-After', String(STORAGE_RETRY_AFTER_SECONDS));
    return sendError(reply, 503, fault.message);
  }
  const status = (error as { statusCode?: number }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // The framework's own refusals: a body that is not JSON, too large, of another media type.
    const detail =
      status === 413
        ? 'The request body is larger than the SCIM endpoint accepts (64 KB).'
        : status === 415
          ? 'Send the body as application/scim+json (or application/json).'
          : 'The request body is not valid JSON.';
    return sendError(reply, status, detail, status === 400 ? 'invalidSyntax' : undefined);
  }
  request.log.error({ err: error }, 'unhandled error in SCIM');
  return sendError(reply, 500, 'An internal error occurred; quote the X-Request-Id header of this answer when reporting it.');
}
