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
  action: AuditAction;
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

/**
 * The actions the trail records. Each feature declares its own beside the code that records
 * them, in its audit-words.ts (a declaration that adds to this interface, and the words that say
 * each in the console and `wsops audit`): an action nobody declared does not compile.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by each feature's declaration
export interface AuditActions {}
export type AuditAction = keyof AuditActions & string;

/** An entry as its words see it: its action, the target (or the key it names) and the detail. */
export interface WordedEntry {
  action: string;
  target: string;
  detail: Record<string, unknown>;
}
/** How each of a feature's actions reads, in plain text (the caller escapes it); ids are kept so they can be searched. */
export type AuditWords = Record<string, (e: WordedEntry) => string>;

/** A detail's string, when it is one and not empty. */
export const auditText = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** "Created API key key_1 (Badge reader)", or without the name when the detail has none. */
export const namedTarget = (what: string, e: WordedEntry, name: unknown): string =>
  auditText(name) ? `${what} ${e.target} (${auditText(name)})` : `${what} ${e.target}`;
