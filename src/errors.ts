/**
 * The one error catalogue: every code the service can answer with, its HTTP status and title.
 * Code deep inside throws AppError with a code; the HTTP shape (RFC 9457) is made at the edge,
 * and the CLI turns the same errors into a one-line reason and exit status 2.
 */
export const ERROR_CATALOGUE = {
  invalid_parameter: { status: 400, title: 'Invalid parameter' },
  unknown_parameter: { status: 400, title: 'Unknown parameter' },
  search_not_supported: { status: 400, title: 'Search not supported' },
  invalid_cursor: { status: 400, title: 'Invalid cursor' },
  cursor_expired: { status: 400, title: 'Cursor expired' },
  cursor_filters_mismatch: { status: 400, title: 'Cursor filters mismatch' },
  invalid_request: { status: 400, title: 'Invalid request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  missing_scope: { status: 403, title: 'Missing scope' },
  forbidden: { status: 403, title: 'Forbidden' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  invalid_state: { status: 409, title: 'Action does not fit the record state' },
  limit_reached: { status: 409, title: 'Plan limit reached' },
  request_timeout: { status: 408, title: 'Request timeout' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  uri_too_long: { status: 414, title: 'URI too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  rate_limited: { status: 429, title: 'Too many requests' },
  header_fields_too_large: { status: 431, title: 'Request header fields too large' },
  internal_error: { status: 500, title: 'Internal error' },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }
}

export function problemType(code: ErrorCode): string {
  return `https://wsops.dev/problems/${code}`;
}
