/**
 * The one error catalogue: every code the service can answer with, its HTTP status and title.
 * Code deep inside throws AppError with a code; the HTTP shape (RFC 9457) is made at the edge,
 * and the CLI turns the same errors into a one-line reason and exit status 2.
 */
export const ERROR_CATALOGUE = {
  invalid_parameter: {
    status: 400,
    title: 'Invalid parameter',
    meaning: 'A query parameter has a value outside the set the endpoint accepts (a filter value, `limit`, `updated_since`, an id).',
    fix: '`param` names the parameter and `detail` the accepted values; correct it and send the request again.',
  },
  unknown_parameter: {
    status: 400,
    title: 'Unknown parameter',
    meaning:
      'The query string holds a parameter this endpoint does not know, or one given twice. It is refused so that a typo never silently widens a sync.',
    fix: "Remove or correct the parameter named in `param`; the OpenAPI document lists each endpoint's parameters.",
  },
  search_not_supported: {
    status: 400,
    title: 'Search not supported',
    meaning: '`search` was sent to a register that has no text search.',
    fix: "Drop `search`, or filter on the register's exact-match filters instead.",
  },
  invalid_cursor: {
    status: 400,
    title: 'Invalid cursor',
    meaning: 'The cursor was altered, truncated, issued to another workspace, or is not a cursor of this service.',
    fix: 'Pass back `next_cursor` exactly as received, or start the walk again without `cursor`.',
  },
  cursor_expired: {
    status: 400,
    title: 'Cursor expired',
    meaning: 'The cursor was issued more than 24 hours ago. Cursors finish a walk; they do not resume one later.',
    fix: 'Start a new walk; to resume a sync later, pass the highest `updated_at` seen as `updated_since`.',
  },
  cursor_filters_mismatch: {
    status: 400,
    title: 'Cursor filters mismatch',
    meaning:
      'The cursor was sent with filters, `search` or `updated_since` different from those it was issued under. Only `limit` may change between pages.',
    fix: 'Send the same filters as on the first page, or start a new walk without `cursor`.',
  },
  deletions_beyond_retention: {
    status: 400,
    title: 'Deletions beyond retention',
    meaning:
      "The deletions feed was asked from before its retention horizon (`since`, or a cursor's position, older than `WSOPS_DELETION_RETENTION_DAYS`): tombstones from then may already be pruned, so the feed cannot say every deletion since that instant.",
    fix: "Walk the register's list in full (without `updated_since`) and remove the records it did not return, then follow the deletions feed without `since` and, from then on, with the highest `deleted_at` seen.",
  },
  events_beyond_retention: {
    status: 400,
    title: 'Events beyond retention',
    meaning:
      "The events API was asked from before its retention horizon (`since`, or a cursor's position, older than `WSOPS_EVENT_RETENTION_DAYS`): events from then are pruned, so the list cannot say every event since that instant.",
    fix: 'Reconcile by walking the registers (with `updated_since` where your copy is recent enough), then list events with a `since` inside the retention.',
  },
  invalid_request: {
    status: 400,
    title: 'Invalid request',
    meaning:
      'The request itself could not be read: a malformed URL or header, a body where none is accepted, or (internal API) a body that is not valid JSON.',
    fix: 'Check the URL encoding, headers and body; every /api/v1 operation is a GET without a body.',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    meaning:
      'The API key was not accepted: missing, malformed, unknown, wrong secret, revoked, expired, or of the other environment. The reason is never told apart.',
    fix: "Send `Authorization: Bearer svc_sk_<env>_<key_id>_<secret>` with a valid key of this deployment's environment; create a new key in the console if in doubt.",
  },
  missing_scope: {
    status: 403,
    title: 'Missing scope',
    meaning: 'The key is valid but lacks the scope this endpoint requires; `missing_scope` names it.',
    fix: 'Create a key that holds the named scope (keys cannot be changed), deploy it, then revoke the old one.',
  },
  ip_not_allowed: {
    status: 403,
    title: 'IP address not allowed',
    meaning:
      'The key is valid but holds an IP allowlist, and the request came from an address outside it (behind a reverse proxy: the client address the trusted proxies report).',
    fix: "Send the request from an address on the key's allowlist, or have an admin of the workspace add this address (console: API keys, or `wsops key allow-ip`).",
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    meaning: 'The credential is valid but not allowed to perform this operation.',
    fix: 'Use a credential that is allowed to, or ask an administrator of the workspace.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    meaning:
      "No such record in this key's workspace (unknown id, another workspace's id, a deleted record, or a module that is not installed), or no such route.",
    fix: 'Check the id and the path; lists show which ids exist.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    meaning:
      'The path exists, but not with this method: every /api/v1 operation is a GET (or HEAD). `Allow` lists the methods the path takes.',
    fix: "Use a method `Allow` lists: GET on /api/v1. Changes are made in the workspace's own tools or on the internal listener, not through /api/v1.",
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    meaning: 'The operation conflicts with the current state of what it changes.',
    fix: 'Read the current state again and retry the operation if it still applies.',
  },
  invalid_state: {
    status: 409,
    title: 'Action does not fit the record state',
    meaning: "The action does not fit the record's current state (for example assigning an asset that is already assigned).",
    fix: '`detail` says which state the record is in; act on a record in the state the action needs.',
  },
  referenced: {
    status: 409,
    title: 'Record still referenced',
    meaning:
      'A delete names a record that other records of the workspace still reference (a manager, a location, an owner, an approver...). Deleting it would leave their references dangling, so nothing was deleted. `referrers` lists, per register and field, how many records name it and the first ids.',
    fix: 'Point the records in `referrers` elsewhere (or clear the field), or delete them first, then delete the record again. In an import, put those lines before the delete line.',
  },
  limit_reached: {
    status: 409,
    title: 'Plan limit reached',
    meaning: 'A plan limit is reached: unrevoked keys per workspace, or five webhook endpoints delivering at once.',
    fix: 'Revoke a key or disable an endpoint first.',
  },
  invalid_record: {
    status: 422,
    title: 'Invalid record',
    meaning:
      "A record written by the system of record (internal API) breaks its register's declaration: an unknown field, a wrong type or value, a derived field set differently, or a reference to a record the workspace does not hold. `pointer` is the JSON pointer of the first field; `errors` lists each with `pointer`, `code` and `detail`.",
    fix: 'Correct the fields named in `errors` and send the write again; the internal OpenAPI document describes each register.',
  },
  precondition_failed: {
    status: 412,
    title: 'Precondition failed',
    meaning: 'The write was conditional (`If-Match`, `If-None-Match`) and the record has moved on, or does not exist, or exists.',
    fix: 'Read the record again (its `ETag`), reapply your change to it, and send the write with the new `If-Match`.',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    meaning: "The request (headers and body) was not received within the server's deadline; the connection was closed.",
    fix: 'Send the whole request promptly; check for a stalled proxy or a client that opens connections it does not use.',
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    meaning: 'The request carried a body larger than the server accepts.',
    fix: 'API operations take no body; console forms are small. Send less.',
  },
  uri_too_long: {
    status: 414,
    title: 'URI too long',
    meaning: 'A path segment is longer than any id can be.',
    fix: 'Check the id in the path; an id is a prefix, `_`, and at most 64 letters, digits, `-` or `_`.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    meaning: 'The request body has a content type this route does not read.',
    fix: 'Send no body to the API; send forms as application/x-www-form-urlencoded to the console.',
  },
  header_fields_too_large: {
    status: 431,
    title: 'Request header fields too large',
    meaning: 'The request line and headers together exceed 16 KB.',
    fix: 'Send a shorter URL or fewer headers.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    meaning: 'The key (`key_id`) used up its request budget, or too many requests from this address were refused.',
    fix: 'Wait `Retry-After` seconds; pace requests using the `RateLimit` header of successful responses.',
  },
  storage_full: {
    status: 503,
    title: 'Storage full',
    meaning:
      "The database's disk is full (SQLite `SQLITE_FULL`, PostgreSQL `53100 disk_full`): the write was not stored, wholly (nothing of it is half-written). An import has `lines_applied`: the lines of the batches it committed before.",
    fix: "Wait `Retry-After` seconds and retry; the operator must free space on the database's volume. Running the same import again converges.",
  },
  database_unavailable: {
    status: 503,
    title: 'Database unavailable',
    meaning:
      'The connection to the database was lost during the request (a restart, a failover, an ended session). An import has `lines_applied`: the lines of the batches it committed before.',
    fix: 'Wait `Retry-After` seconds and retry; writes are idempotent, and running the same import again converges.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    meaning: 'The service failed to answer; nothing about the request was wrong.',
    fix: 'Retry with backoff. If it persists, report it with the `request_id`.',
  },
} as const satisfies Record<string, { status: number; title: string; meaning: string; fix: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    /** What caused it, for the log (a full disk's own error). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AppError';
  }
  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }
}

/** Where a problem `type` resolves: this deployment's error catalogue page, at the code's anchor. */
export function problemType(code: ErrorCode, baseUrl: string): string {
  return `${baseUrl}${ERRORS_PAGE_PATH}#${code}`;
}

export const ERRORS_PAGE_PATH = '/developers/errors';
