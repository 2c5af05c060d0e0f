import type { Insertable, Kysely } from '#kysely';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { DB } from '../store/schema.js';

export interface AuditEntry {
  workspaceId: string;
  at: string;
  /**
   * Who did it: `cli` (the operator CLI), `operator` (the internal API), `console:<email>`,
   * `key:<key_id>`, `scim:<token_id>` (an identity provider's SCIM token), `system`.
   */
  actor: string;
  action: string;
  keyId?: string | null;
  target?: string | null;
  detail?: Record<string, unknown>;
}

/** The kinds of entry: the prefix of the action (`key.created` is a `key` entry). */
export const AUDIT_KINDS = {
  key: 'API keys',
  endpoint: 'Webhook endpoints',
  delivery: 'Webhook deliveries',
  module: 'Modules',
  admin: 'Console admins',
  scim: 'SCIM tokens',
  record: 'Record corrections, deletions and imports',
  action: 'Domain actions',
  workspace: 'Workspace',
} as const satisfies Record<string, string>;
export type AuditKind = keyof typeof AUDIT_KINDS;

/** Kinds of actor; `operator` covers the CLI and the internal API (both run by the operator). */
export const ACTOR_KINDS = {
  operator: 'Operator (CLI or internal API)',
  console: 'Console admins',
  key: 'API keys',
  scim: 'Identity providers (SCIM tokens)',
  system: 'The service itself',
} as const satisfies Record<string, string>;
export type ActorKind = keyof typeof ACTOR_KINDS;

/** Prefixes filed under another kind (`deliveries.recovered` is a `delivery` entry). */
const KIND_ALIASES: Record<string, string> = { deliveries: 'delivery' };

export function auditKindOf(action: string): string {
  const dot = action.indexOf('.');
  const prefix = dot > 0 ? action.slice(0, dot) : action;
  return KIND_ALIASES[prefix] ?? prefix;
}

export function actorKindOf(actor: string): string {
  if (actor === 'cli' || actor === 'operator') return 'operator';
  if (actor.startsWith('console:')) return 'console';
  if (actor.startsWith('key:')) return 'key';
  if (actor.startsWith('scim:')) return 'scim';
  return actor;
}

/** An audit entry's row, not yet written (a domain action writes it with its events, run.ts). */
export function auditRow(e: AuditEntry): Insertable<DB['audit_events']> {
  return {
    id: newId('aud'),
    workspace_id: e.workspaceId,
    at: e.at,
    actor: e.actor,
    action: e.action,
    kind: auditKindOf(e.action),
    actor_kind: actorKindOf(e.actor),
    key_id: e.keyId ?? null,
    target: e.target ?? null,
    detail: JSON.stringify(e.detail ?? {}),
  };
}

export async function recordAudit(db: Kysely<DB>, e: AuditEntry): Promise<void> {
  await db.insertInto('audit_events').values(auditRow(e)).execute();
}

export interface AuditRow {
  /** Position in the trail: pages are cut by it (`before`). */
  seq: number;
  id: string;
  at: string;
  actor: string;
  action: string;
  key_id: string | null;
  target: string | null;
  detail: Record<string, unknown>;
}

export interface AuditQuery {
  /** An action prefix from AUDIT_KINDS. */
  kind?: string;
  /** An actor kind from ACTOR_KINDS (`operator`, `console`...) or an exact actor (`console:ann@example.com`). */
  actor?: string;
  /** Only entries older than this seq (the keyset cursor of the next page). */
  before?: number;
  /** 1 to 500; default 100. */
  limit?: number;
}

export const AUDIT_MAX_LIMIT = 500;

/** Checks a query's values; a wrong one is refused with what is accepted. */
export function validateAuditQuery(q: AuditQuery): void {
  if (q.kind !== undefined && !Object.hasOwn(AUDIT_KINDS, q.kind)) {
    throw new AppError('invalid_parameter', `unknown kind "${q.kind.slice(0, 40)}"; kinds are: ${Object.keys(AUDIT_KINDS).join(', ')}`, {
      param: 'kind',
    });
  }
  if (q.actor !== undefined && (q.actor.length === 0 || q.actor.length > 320)) {
    throw new AppError(
      'invalid_parameter',
      `actor must be one of ${Object.keys(ACTOR_KINDS).join(', ')} or an exact actor such as console:ann@example.com`,
      { param: 'actor' },
    );
  }
  if (q.before !== undefined && (!Number.isSafeInteger(q.before) || q.before < 1)) {
    throw new AppError('invalid_parameter', 'before must be a positive whole number: the seq of the last entry seen', { param: 'before' });
  }
  if (q.limit !== undefined && (!Number.isInteger(q.limit) || q.limit < 1 || q.limit > AUDIT_MAX_LIMIT)) {
    throw new AppError('invalid_parameter', `limit must be a whole number from 1 to ${AUDIT_MAX_LIMIT}`, { param: 'limit' });
  }
}

/**
 * The workspace's audit trail, newest first, paged by seq (keyset): each filter has an index
 * ending in seq (migration 0012), so a page costs the same at any depth.
 */
export async function listAudit(db: Kysely<DB>, workspaceId: string, query: AuditQuery = {}): Promise<AuditRow[]> {
  validateAuditQuery(query);
  return queryAudit(db, workspaceId, query);
}

async function queryAudit(db: Kysely<DB>, workspaceId: string, query: AuditQuery): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_events').selectAll().where('workspace_id', '=', workspaceId);
  if (query.kind !== undefined) q = q.where('kind', '=', query.kind);
  if (query.actor !== undefined) {
    q = Object.hasOwn(ACTOR_KINDS, query.actor) ? q.where('actor_kind', '=', query.actor) : q.where('actor', '=', query.actor);
  }
  if (query.before !== undefined) q = q.where('seq', '<', query.before);
  const rows = await q
    .orderBy('seq', 'desc')
    .limit(query.limit ?? 100)
    .execute();
  return rows.map((r) => ({
    seq: Number(r.seq),
    id: r.id,
    at: r.at,
    actor: r.actor,
    action: r.action,
    key_id: r.key_id,
    target: r.target,
    detail: JSON.parse(r.detail) as Record<string, unknown>,
  }));
}

export interface AuditPage {
  entries: AuditRow[];
  /** The `before` of the next (older) page, or null on the last page. */
  nextBefore: number | null;
}

/** One page of the trail and the cursor of the next one (one extra row tells whether it exists). */
export async function auditPage(db: Kysely<DB>, workspaceId: string, query: AuditQuery): Promise<AuditPage> {
  const limit = query.limit ?? 50;
  validateAuditQuery({ ...query, limit });
  const rows = await queryAudit(db, workspaceId, { ...query, limit: limit + 1 });
  const entries = rows.slice(0, limit);
  return { entries, nextBefore: rows.length > limit ? (entries.at(-1)?.seq ?? null) : null };
}

/** Who did it, in words. */
export function describeActor(actor: string): string {
  if (actor === 'cli') return 'Operator (CLI)';
  if (actor === 'operator') return 'Operator (internal API)';
  if (actor === 'system') return 'The service';
  if (actor.startsWith('console:')) return actor.slice('console:'.length);
  if (actor.startsWith('key:')) return `API key ${actor.slice('key:'.length)}`;
  return actor;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** What was done, in words (plain text: the caller escapes it). Ids are kept so they can be searched. */
export function describeAudit(e: Pick<AuditRow, 'action' | 'target' | 'key_id' | 'detail'>): string {
  const d = e.detail;
  const target = e.target ?? e.key_id ?? '';
  const named = (what: string, name: unknown) => (text(name) ? `${what} ${target} (${text(name)})` : `${what} ${target}`);
  switch (e.action) {
    case 'key.created':
      return named('Created API key', d.name);
    case 'key.revoked':
      return `Revoked API key ${target}`;
    case 'key.rolled':
      return d.grace === '0'
        ? `Rolled API key ${target} into ${text(d.successor) ?? 'a new key'} (old key revoked at once)`
        : `Rolled API key ${target} into ${text(d.successor) ?? 'a new key'} (old key revoked at ${text(d.revoked_at) ?? 'the end of the grace'})`;
    case 'key.allowlist_changed':
      return Array.isArray(d.allowed_ips) && d.allowed_ips.length
        ? `Limited API key ${target} to ${d.allowed_ips.join(', ')}`
        : `Let API key ${target} be used from any address`;
    case 'endpoint.created':
      return text(d.url) ? `Registered webhook endpoint ${target} (${text(d.url)})` : `Registered webhook endpoint ${target}`;
    case 'endpoint.disabled':
      return d.reason === 'failures'
        ? `Webhook endpoint ${target} was disabled after repeated failures`
        : `Disabled webhook endpoint ${target}`;
    case 'endpoint.enabled':
      return `Switched on webhook endpoint ${target} (verification sent again)`;
    case 'endpoint.verification_sent':
      return `Resent the verification of webhook endpoint ${target}`;
    case 'endpoint.secret_rotated':
      return typeof d.grace_hours === 'number'
        ? `Rotated the signing secret of webhook endpoint ${target} (old secret valid ${d.grace_hours} more hours)`
        : `Rotated the signing secret of webhook endpoint ${target}`;
    case 'endpoint.alert_sent': {
      const what =
        d.stage === 'failing'
          ? // The threshold when it was mailed (WSOPS_ALERT_FAILING_AFTER_MINUTES); entries of before it was a setting: an hour.
            `has been failing for over ${text(d.failing_after) ?? 'an hour'}`
          : d.stage === 'disabled'
            ? 'was disabled after failures'
            : d.stage === 'recovered'
              ? 'has recovered'
              : 'has failures';
      const to = typeof d.recipients === 'number' ? ` to ${d.recipients} console admin${d.recipients === 1 ? '' : 's'}` : '';
      return `Mailed an alert${to}: webhook endpoint ${target} ${what}`;
    }
    case 'endpoint.alert_recipient_added':
      return `Added ${target} to the failure alert recipients`;
    case 'endpoint.alert_recipient_removed':
      return `Removed ${target} from the failure alert recipients`;
    case 'endpoint.test_alert_sent': {
      const to = typeof d.recipients === 'number' ? `${d.recipients} recipient${d.recipients === 1 ? '' : 's'}` : 'the recipients';
      return d.sent === true
        ? `Mailed a test failure alert to ${to}`
        : `A test failure alert to ${to} was not accepted${text(d.server_response) ? `: ${text(d.server_response)}` : ''}`;
    }
    case 'endpoint.test_sent':
      return `Sent a test event to webhook endpoint ${target}`;
    case 'endpoint.throttle_set':
      return typeof d.max_per_second === 'number'
        ? `Throttled webhook endpoint ${target} to ${d.max_per_second} deliveries per second`
        : `Removed the throttle of webhook endpoint ${target}`;
    case 'scim.token_created':
      return named('Created SCIM token', d.name);
    case 'scim.token_revoked':
      return `Revoked SCIM token ${target}`;
    case 'record.scim_created':
      return `The identity provider created person ${target} (SCIM)`;
    case 'record.scim_restored':
      return `The identity provider created person ${target} again, after a SCIM delete had kept it (SCIM)`;
    case 'record.scim_replaced':
      return `The identity provider replaced person ${target} (SCIM)`;
    case 'record.scim_patched':
      return `The identity provider changed person ${target} (SCIM)`;
    case 'record.scim_deleted':
      return `The identity provider deleted person ${target} (SCIM)`;
    case 'record.scim_deactivated':
      return `The identity provider deleted person ${target}; other records name it, so it was kept as INACTIVE (SCIM)`;
    case 'endpoint.filter_set':
      return typeof d.filter === 'string'
        ? `Set the content filter of webhook endpoint ${target}: ${d.filter.slice(0, 200)}`
        : `Removed the content filter of webhook endpoint ${target}`;
    case 'endpoint.signatures_set':
      return d.standard_webhooks === true
        ? `Webhook endpoint ${target} is sent the Standard Webhooks headers beside X-Service-Signature`
        : `Webhook endpoint ${target} is sent X-Service-Signature alone`;
    case 'module.installed':
      return `Installed the ${target} module`;
    case 'module.uninstalled':
      return `Uninstalled the ${target} module`;
    case 'admin.added':
      return text(d.email) ? `Invited console admin ${text(d.email)}` : `Invited console admin ${target}`;
    case 'admin.link_issued':
      return text(d.email) ? `Issued a new sign-in link for ${text(d.email)}` : `Issued a new sign-in link for admin ${target}`;
    case 'admin.break_glass_issued':
      return `Issued an emergency sign-in link, past single sign-on, for ${text(d.email) ?? `admin ${target}`}${text(d.reason) ? `: ${text(d.reason)}` : ''}`;
    case 'admin.break_glass_used':
      return `${text(d.email) ?? `Admin ${target}`} signed in with an emergency link, past single sign-on`;
    case 'admin.removed':
      return text(d.email) ? `Removed console admin ${text(d.email)}` : `Removed console admin ${target}`;
    case 'admin.totp_enabled':
      return `Set up an authenticator app as the second factor of admin ${target}`;
    case 'admin.totp_disabled':
      return `Removed the authenticator app of admin ${target}`;
    case 'admin.recovery_code_used':
      return `Admin ${target} signed in with a recovery code`;
    case 'admin.passkey_added':
      return `Added a passkey${text(d.name) ? ` (${text(d.name)})` : ''} as a second factor of admin ${target}`;
    case 'admin.passkey_removed':
      return `Removed the passkey${text(d.name) ? ` (${text(d.name)})` : ''} of admin ${target}`;
    case 'admin.passkey_used':
      return `Admin ${target} signed in with a passkey${text(d.name) ? ` (${text(d.name)})` : ''}`;
    case 'workspace.second_factor_required':
      return 'Required a second factor for every console admin';
    case 'workspace.second_factor_optional':
      return 'Made the second factor optional for console admins';
    case 'workspace.sso_set':
      return text(d.issuer)
        ? `Set up single sign-on with ${text(d.issuer)}${text(d.domain) ? ` for ${text(d.domain)}` : ''}`
        : 'Set up single sign-on';
    case 'workspace.sso_removed':
      return 'Removed single sign-on';
    case 'delivery.resent':
      return `Resent ${text(d.event_type) ?? 'an event'} ${text(d.event_id) ?? ''} to webhook endpoint ${target}`.replace('  ', ' ');
    case 'deliveries.recovered':
      return `Recovered ${typeof d.recovered === 'number' ? d.recovered : 'the'} failed deliveries of webhook endpoint ${target}${text(d.since) ? ` since ${text(d.since)}` : ''}`;
    case 'record.corrected':
      return `Corrected ${text(d.register) ?? 'record'} ${target}${Array.isArray(d.fields) ? `: ${d.fields.join(', ')}` : ''}`;
    case 'record.deleted':
      return `Deleted ${text(d.register) ?? 'record'} ${target}`;
    case 'record.imported':
      return `Imported records (${target}): ${Number(d.lines) || 0} lines, ${Number(d.refused) || 0} refused${d.committed === false ? ', nothing committed' : ''}`;
    case 'workspace.created':
      return text(d.name) ? `Created the workspace (${text(d.name)})` : 'Created the workspace';
  }
  if (e.action.startsWith('action.')) return `Ran ${e.action.slice('action.'.length).replace(/_/g, ' ')}${target ? ` on ${target}` : ''}`;
  return `${e.action}${target ? ` ${target}` : ''}`;
}
