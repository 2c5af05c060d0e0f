/**
 * Typed errors. Every error that came from a server response carries its `status`, the
 * problem `code`, `detail` and the `requestId` to quote when reporting it. No error message
 * ever contains the API key: messages are built from the server's problem body and the
 * request's method and path only.
 */

/** The RFC 9457 problem body the API returns on every error. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  request_id?: string;
  param?: string;
  missing_scope?: string;
  key_id?: string;
}

export class WsopsError extends Error {
  override name = 'WsopsError';
}

/** The server answered with an error status. */
export class WsopsApiError extends WsopsError {
  override name = 'WsopsApiError';
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  /** The request's id (`Request-Id` header, `request_id` in the body): quote it when reporting. */
  readonly requestId: string | undefined;
  readonly problem: Problem;
  constructor(status: number, problem: Problem, requestId: string | undefined) {
    const detail = problem.detail ?? problem.title ?? `HTTP ${status}`;
    super(`${detail}${requestId ? ` (request_id ${requestId})` : ''}`);
    this.status = status;
    this.code = problem.code ?? 'unknown';
    this.detail = detail;
    this.requestId = requestId ?? problem.request_id;
    this.problem = problem;
  }
  /** The same value as `requestId`, named as in the problem body. */
  get request_id(): string | undefined {
    return this.requestId;
  }
}

/** 401: the key is not accepted (unknown, wrong, revoked, expired, other environment). */
export class AuthenticationError extends WsopsApiError {
  override name = 'AuthenticationError';
}

/** 403: the key is valid but lacks a scope. */
export class PermissionError extends WsopsApiError {
  override name = 'PermissionError';
  get missingScope(): string | undefined {
    return this.problem.missing_scope;
  }
}

/** 400: a parameter was wrong; `param` names it, `code` says how. */
export class InvalidRequestError extends WsopsApiError {
  override name = 'InvalidRequestError';
  get param(): string | undefined {
    return this.problem.param;
  }
}

/** 404: no such record in this workspace (or its module is not installed). */
export class NotFoundError extends WsopsApiError {
  override name = 'NotFoundError';
}

/** 429 after the retries ran out: `retryAfter` seconds to wait, `keyId` the limited key. */
export class RateLimitError extends WsopsApiError {
  override name = 'RateLimitError';
  readonly retryAfter: number | undefined;
  constructor(status: number, problem: Problem, requestId: string | undefined, retryAfter: number | undefined) {
    super(status, problem, requestId);
    this.retryAfter = retryAfter;
  }
  get keyId(): string | undefined {
    return this.problem.key_id;
  }
}

/** 5xx after the retries ran out. */
export class ServerError extends WsopsApiError {
  override name = 'ServerError';
}

/** The server could not be reached (refused, reset, DNS) after the retries ran out. */
export class ConnectionError extends WsopsError {
  override name = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No response within `timeoutMs` (per attempt) after the retries ran out. */
export class TimeoutError extends WsopsError {
  override name = 'TimeoutError';
}

/** Builds the error for an error response. */
export function errorFromResponse(status: number, problem: Problem, requestId: string | undefined, retryAfter?: number): WsopsApiError {
  if (status === 401) return new AuthenticationError(status, problem, requestId);
  if (status === 403) return new PermissionError(status, problem, requestId);
  if (status === 404) return new NotFoundError(status, problem, requestId);
  if (status === 429) return new RateLimitError(status, problem, requestId, retryAfter);
  if (status >= 500) return new ServerError(status, problem, requestId);
  if (status === 400 || status === 422) return new InvalidRequestError(status, problem, requestId);
  return new WsopsApiError(status, problem, requestId);
}
