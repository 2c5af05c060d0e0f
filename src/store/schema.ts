/** Table types for Kysely. One schema for both dialects: timestamps are ISO 8601 UTC text. */
import type { Generated } from '#kysely';

export interface SettingsTable {
  name: string;
  value: string;
}

export interface WorkspacesTable {
  id: string;
  name: string;
  /** Space-separated optional modules that are installed. */
  modules: string;
  created_at: string;
}

export interface ApiKeysTable {
  key_id: string;
  workspace_id: string;
  name: string;
  environment: string;
  secret_hash: string;
  /** Space-separated scopes. */
  scopes: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  created_by: string | null;
  /** Client address of the last use (recorded with last_used_at, at most once a minute). */
  last_used_ip: string | null;
  /** Space-separated CIDR ranges the key may be used from; null: anywhere. */
  allowed_ips: string | null;
  /** 1 when the secret ends in its checksum; 0 for keys made before checksums (migration 0018). */
  checksummed: number;
}

/** A workspace SCIM token (src/scim/): the credential identity providers provision people with. */
export interface ScimTokensTable {
  token_id: string;
  workspace_id: string;
  name: string;
  environment: string;
  secret_hash: string;
  /** Where people created through this token are placed (the register requires a location). */
  location_id: string;
  created_at: string;
  /** `cli` or `console:<email>`. */
  created_by: string;
  revoked_at: string | null;
  last_used_at: string | null;
  /** When the token stops working (migration 0039); null: until revoked. */
  expires_at: string | null;
}

/** What SCIM holds about a person beyond the people register's fields. */
export interface ScimPeopleTable {
  workspace_id: string;
  person_id: string;
  external_id: string | null;
  employee_number: string | null;
  /** Set when a SCIM DELETE kept the person (still referenced) as INACTIVE: SCIM no longer sees it. */
  deleted_at: string | null;
  /** The User's userName as the identity provider wrote it (null: rows of before migration 0037 that shared one). */
  user_name: string | null;
  /** userName lower-cased: unique per workspace (index scim_people_user_name, migration 0037). */
  user_name_key: string | null;
}

/** What a SCIM filter compares, one row per person, kept by triggers on records and scim_people (migration 0043). */
export interface ScimPeopleFieldsTable {
  workspace_id: string;
  person_id: string;
  /** Lower-cased, as the filters compare them. */
  work_email: string | null;
  display_name: string | null;
  given_name: string | null;
  family_name: string | null;
  status: string | null;
  manager_id: string | null;
  /** userName as filters compare it: scim_people.user_name_key, else the work email. */
  user_name: string | null;
  external_id: string | null;
  employee_number: string | null;
  deleted_at: string | null;
}

export interface AuditEventsTable {
  seq: Generated<number>;
  id: string;
  workspace_id: string;
  at: string;
  actor: string;
  action: string;
  key_id: string | null;
  target: string | null;
  detail: string;
  /** The action's prefix (`key`, `endpoint`...): set by recordAudit, backfilled by migration 0012. */
  kind: string | null;
  /** `operator` (CLI and internal API), `console`, `key`, `system`. */
  actor_kind: string | null;
}

export interface ApiUsageTable {
  workspace_id: string;
  /** ISO 8601 start of the hour. */
  hour: string;
  key_id: string;
  requests: number;
}

export interface ConsoleAdminsTable {
  id: string;
  workspace_id: string;
  /** Lower-cased; unique among active admins across the deployment. */
  email: string;
  /** `scrypt$N$r$p$salt$hash`; null until the first link is followed. */
  password_hash: string | null;
  created_at: string;
  /** The actor who added the admin (`cli`, `console:<email>`). */
  created_by: string;
  removed_at: string | null;
  last_sign_in_at: string | null;
}

export interface ConsoleSignInLinksTable {
  /** SHA-256 of the link's token. */
  token_hash: string;
  admin_id: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  /** 1: issued by `wsops admin break-glass`: signs in once without a password, even while password sign-in is off. */
  break_glass: Generated<number>;
}

/** An admin's authenticator app (one per admin); the secret sealed with the secret box. */
export interface AdminTotpTable {
  admin_id: string;
  secret_ciphertext: string;
  created_at: string;
  /** The 30-second step of the last code accepted: a code of that step or before is refused (no replay). */
  last_step: number;
}

/** One-time recovery codes, stored only as SHA-256 hashes. */
export interface AdminRecoveryCodesTable {
  code_hash: string;
  admin_id: string;
  created_at: string;
  used_at: string | null;
}

/** WebAuthn passkeys: the credential's public key (COSE, base64url) and signature counter. */
export interface AdminPasskeysTable {
  credential_id: string;
  admin_id: string;
  public_key: string;
  counter: number;
  /** Space-separated transports the authenticator reported. */
  transports: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/**
 * A passkey ceremony's challenge: bound to one console session and one purpose, used once,
 * valid until expires_at.
 */
export interface WebauthnChallengesTable {
  /** base64url, as the browser signs it into clientDataJSON. */
  challenge: string;
  session_id: string;
  purpose: 'register' | 'sign-in' | 'confirm';
  expires_at: string;
}

/** A workspace's console sign-in rules and its OpenID Connect single sign-on (absent row: defaults). */
export interface WorkspaceSignInTable {
  workspace_id: string;
  /** 1: every admin must have a second factor (those without one are sent to enrol). */
  require_second_factor: number;
  /** 0: password sign-in is off (SSO only). */
  password_sign_in: number;
  sso_issuer: string | null;
  sso_client_id: string | null;
  sso_client_secret_ciphertext: string | null;
  /** The email domain SSO accepts, lower case (e.g. example.com). */
  sso_domain: string | null;
  /** 1: an SSO sign-in of an unknown address in the domain creates the admin. */
  sso_create_admins: number;
  /** 1: an SSO answer without an email_verified claim is trusted (a provider that never sends it). */
  sso_trust_missing_email_verified: number;
  updated_at: string;
}

export interface ConsoleSessionsTable {
  /** SHA-256 of the cookie value. */
  id: string;
  admin_id: string;
  /** Synchronizer token carried by every POST form. */
  csrf_token: string;
  created_at: string;
  /** Written at most every few minutes (idle expiry needs no finer grain). */
  last_seen_at: string;
  /** 1 while the password was right but the second factor is still owed: such a session opens no page. */
  second_factor_pending: number;
}

export interface RecordsTable {
  id: string;
  workspace_id: string;
  register: string;
  created_at: string;
  updated_at: string;
  location_id: string | null;
  status: string | null;
  category: string | null;
  record_type: string | null;
  search_text: string;
  /** The record's JSON, exactly as the API returns it (built from the register's allow-list). */
  doc: string;
  /** The ids the record names by its reference fields, as a JSON array (migration 0027's reverse index reads it). */
  refs: string;
}

/** The columns of a records row, in table order (bulk statements list them once, from here). */
export const RECORD_COLUMNS = [
  'id',
  'workspace_id',
  'register',
  'created_at',
  'updated_at',
  'location_id',
  'status',
  'category',
  'record_type',
  'search_text',
  'doc',
  'refs',
] as const satisfies readonly (keyof RecordsTable)[];

/** The reverse index of references: `source_id` names `target_id` (kept by triggers from records.refs). */
export interface RecordRefsTable {
  workspace_id: string;
  target_id: string;
  source_id: string;
}

/** A deleted record's id and when it was deleted: the deletions feed (migration 0028). */
export interface RecordTombstonesTable {
  workspace_id: string;
  id: string;
  /** The register's path (`assets`). */
  register: string;
  deleted_at: string;
}

/** One import of records (HTTP, CLI or console), as the Data page lists it. */

export interface RecordImportsTable {
  id: string;
  workspace_id: string;
  /** `operator` (internal API, CLI) or `console:<email>`. */
  actor: string;
  started_at: string;
  /** Null while the import runs (an import whose process died is marked interrupted: import-runs.ts). */
  finished_at: string | null;
  dry_run: number;
  atomic: number;
  lines: number;
  refused: number;
  /** The import's report as JSON (counts per register and operation, the first refused lines). */
  report: string;
  /** The process running it (`host pid-namespace pid`), null for imports older than migration 0026. */
  owner: string | null;
  /** When its process last showed it was alive (each batch, and a heartbeat while it waits). */
  alive_at: string | null;
}

export interface WebhookEndpointsTable {
  id: string;
  workspace_id: string;
  url: string;
  /** Space-separated read scopes. */
  scopes: string;
  /** Space-separated event types. */
  events: string;
  status: 'unverified' | 'active' | 'disabled';
  disabled_reason: 'user' | 'failures' | null;
  /** AES-256-GCM ciphertext of the signing secret (it must be recoverable to sign). */
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
  consecutive_failures: number;
  last_failure: string | null;
  created_at: string;
  updated_at: string;
  verified_at: string | null;
  disabled_at: string | null;
  /** The throttle: deliveries per second at most (null: none). */
  max_per_second: number | null;
  /** When a throttled endpoint may next be sent a delivery (moved by each claim). */
  throttle_next_at: string | null;
  /** 1: deliveries also carry the Standard Webhooks headers (webhook-id, -timestamp, -signature). */
  standard_webhooks: number;
  /** When the current run of failures began (null while healthy): the failure episode. */
  failing_since: string | null;
  /** A broker destination's password, sealed like the signing secret (migration 0041); null for webhooks and NATS. */
  destination_secret_ciphertext: string | null;
  /** RabbitMQ: the exchange published to, and the routing-key template (destinations/templates.ts). */
  exchange: string | null;
  routing_key: string | null;
  /** NATS JetStream: the subject template. */
  subject: string | null;
  /** The content filter as canonical JSON text (migration 0040, webhooks/events/event-filter.ts); null: none. */
  filter: string | null;
}

/** A failure alert about an endpoint: one per endpoint, stage and failure episode. */
export interface EndpointAlertsTable {
  id: string;
  workspace_id: string;
  endpoint_id: string;
  stage: 'failing' | 'disabled' | 'recovered';
  /** The `failing_since` of the episode the alert belongs to. */
  episode: string;
  error_class: string | null;
  last_failure: string | null;
  /** pending: to be mailed; sent; failed: gave up after retries; console: no SMTP set, shown in the console only. */
  state: 'pending' | 'sent' | 'failed' | 'console';
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  /** Comma-separated addresses the mail went to. */
  recipients: string | null;
  created_at: string;
  sent_at: string | null;
}

/** An address a workspace's failure alerts also go to, besides its console admins (migration 0038). */
export interface AlertRecipientsTable {
  workspace_id: string;
  /** Lower-cased (normalizeEmail). */
  email: string;
  created_at: string;
}

export interface EventsTable {
  id: string;
  workspace_id: string;
  type: string;
  created_at: string;
  /** The exact JSON body every delivery of this event sends. */
  body: string;
}

export interface DeliveryJobsTable {
  id: string;
  workspace_id: string;
  event_id: string;
  endpoint_id: string;
  /** Copied from the event, so the claim can read the queue alone (no join before the LIMIT). */
  event_type: string;
  /** `held`: owed to a disabled endpoint, kept until it is active again. */
  state: 'pending' | 'held' | 'succeeded' | 'exhausted';
  attempts: number;
  next_attempt_at: string | null;
  lease_until: string | null;
  /** The claim (one token per claimed batch) that holds the lease; completion requires it. */
  locked_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryAttemptsTable {
  /** `dlv_…`: the X-Service-Delivery header of this attempt. */
  id: string;
  job_id: string;
  workspace_id: string;
  event_id: string;
  event_type: string;
  endpoint_id: string;
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  outcome: 'succeeded' | 'failed';
  error_class: string | null;
  latency_ms: number;
  response_body: string | null;
  next_attempt_at: string | null;
}

export interface RenewalNoticesTable {
  workspace_id: string;
  vendor_id: string;
  renewal_date: string;
  event_id: string;
  created_at: string;
}

/**
 * Attempts per endpoint, hour and latency (migration 0013), kept by triggers on
 * delivery_attempts: the 24 h / 7 d chart reads this instead of every attempt. One row per
 * distinct latency keeps the median exact.
 */
export interface DeliveryAttemptHoursTable {
  endpoint_id: string;
  /** The first 13 characters of attempted_at: 'YYYY-MM-DDTHH'. */
  hour: string;
  latency_ms: number;
  attempts: number;
  succeeded: number;
}

export interface DB {
  webhook_endpoints: WebhookEndpointsTable;
  endpoint_alerts: EndpointAlertsTable;
  alert_recipients: AlertRecipientsTable;
  events: EventsTable;
  delivery_jobs: DeliveryJobsTable;
  delivery_attempts: DeliveryAttemptsTable;
  delivery_attempt_hours: DeliveryAttemptHoursTable;
  renewal_notices: RenewalNoticesTable;
  settings: SettingsTable;
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  scim_tokens: ScimTokensTable;
  scim_people: ScimPeopleTable;
  scim_people_fields: ScimPeopleFieldsTable;
  audit_events: AuditEventsTable;
  records: RecordsTable;
  record_tombstones: RecordTombstonesTable;
  record_refs: RecordRefsTable;
  record_imports: RecordImportsTable;
  console_admins: ConsoleAdminsTable;
  console_sign_in_links: ConsoleSignInLinksTable;
  console_sessions: ConsoleSessionsTable;
  admin_totp: AdminTotpTable;
  admin_recovery_codes: AdminRecoveryCodesTable;
  admin_passkeys: AdminPasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  workspace_sign_in: WorkspaceSignInTable;
  api_usage: ApiUsageTable;
}
