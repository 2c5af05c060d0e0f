/**
 * Webhook endpoint registration and its state machine, checked in one place for the CLI now
 * and the console later: unverified → active (2xx to the verification) → disabled (by a user,
 * or after 20 failed attempts in a row) → re-verified and switched on. There is no delete.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from '#kysely';
import { recordAudit } from '../../audit/audit.js';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { newId, randomBase62 } from '../../ids.js';
import { splitList } from '../../lists.js';
import type { Logger } from '../../logger.js';
import { READ_SCOPES, WRITE_SCOPES } from '../../registers/define.js';
import type { SecretBox } from '../../secret-box.js';
import type { Database } from '../../store/database.js';
import type { DB, WebhookEndpointsTable } from '../../store/schema.js';
import { lockWorkspace } from '../../workspaces/workspaces.js';
import { checkEndpointUrl, type DestinationKind, type DestinationOptions, kindOf, parseDestination } from '../destinations/address.js';
import { parseFilter } from '../events/event-filter.js';
import { EVENT_TYPES, isEventType, SUBSCRIBABLE_EVENTS, VERIFICATION_EVENT } from '../events/event-types.js';
import { emitVerification } from '../events/outbox.js';
import { holdOwedJobs, makeDueNow } from '../queue/queue.js';

/** What this file takes of the services built at start (services.ts). */
export interface EndpointsServices {
  config: Config;
  database: Database;
  secretBox: SecretBox;
  clock: Clock;
  logger: Logger;
}

export const MAX_DELIVERING_ENDPOINTS = 5;
export const DEFAULT_ROTATION_GRACE_HOURS = 24;
const MAX_ROTATION_GRACE_HOURS = 24 * 7;

export interface EndpointView {
  id: string;
  url: string;
  scopes: string[];
  events: string[];
  status: 'unverified' | 'active' | 'disabled';
  disabled_reason: 'user' | 'failures' | null;
  consecutive_failures: number;
  last_failure: string | null;
  created_at: string;
  updated_at: string;
  verified_at: string | null;
  disabled_at: string | null;
  previous_secret_expires_at: string | null;
  /** The throttle: deliveries per second at most (null: none). */
  max_per_second: number | null;
  /** Deliveries also carry the Standard Webhooks headers beside X-Service-Signature. */
  standard_webhooks: boolean;
  /** Event destinations (ADR 52): the kind the URL's scheme names, and the kind's settings (null where they do not apply). */
  kind: DestinationKind;
  exchange: string | null;
  routing_key: string | null;
  subject: string | null;
  /** The content filter (webhooks/events/event-filter.ts): only matching events are sent; null: every event subscribed to. */
  filter: Record<string, unknown> | null;
}

export function toView(row: WebhookEndpointsTable): EndpointView {
  return {
    id: row.id,
    url: row.url,
    scopes: row.scopes.split(' '),
    events: row.events.split(' '),
    status: row.status,
    disabled_reason: row.disabled_reason,
    consecutive_failures: row.consecutive_failures,
    last_failure: row.last_failure,
    created_at: row.created_at,
    updated_at: row.updated_at,
    verified_at: row.verified_at,
    disabled_at: row.disabled_at,
    previous_secret_expires_at: row.previous_secret_expires_at,
    max_per_second: row.max_per_second,
    standard_webhooks: Number(row.standard_webhooks) === 1,
    kind: kindOf(row.url),
    exchange: row.exchange,
    routing_key: row.routing_key,
    subject: row.subject,
    filter: row.filter ? (JSON.parse(row.filter) as Record<string, unknown>) : null,
  };
}

/** The scope and event rules of registration; the URL rules live in url-safety.ts. */
export function checkSubscription(scopesSpec: string | readonly string[], eventsSpec: string | readonly string[]) {
  const scopes = splitList(scopesSpec);
  const events = splitList(eventsSpec);
  if (scopes.length === 0) throw new AppError('invalid_parameter', 'give at least one read scope', { param: 'scopes', rule: 'scopes' });
  for (const s of scopes) {
    if ((WRITE_SCOPES as readonly string[]).includes(s)) {
      throw new AppError(
        'invalid_parameter',
        `${s} is a write scope; webhook endpoints take read scopes only (${READ_SCOPES.join(', ')})`,
        {
          param: 'scopes',
          rule: 'write_scope',
        },
      );
    }
    if (!(READ_SCOPES as readonly string[]).includes(s)) {
      throw new AppError('invalid_parameter', `unknown scope "${s}"; read scopes are: ${READ_SCOPES.join(', ')}`, {
        param: 'scopes',
        rule: 'scopes',
      });
    }
  }
  if (events.length === 0) throw new AppError('invalid_parameter', 'give at least one event type', { param: 'events', rule: 'events' });
  for (const e of events) {
    if (e === VERIFICATION_EVENT) {
      throw new AppError('invalid_parameter', `${VERIFICATION_EVENT} is sent to every new endpoint and cannot be subscribed to`, {
        param: 'events',
        rule: 'events',
      });
    }
    if (!isEventType(e)) {
      throw new AppError('invalid_parameter', `unknown event "${e}"; events are: ${SUBSCRIBABLE_EVENTS.join(', ')}`, {
        param: 'events',
        rule: 'events',
      });
    }
    const needed = EVENT_TYPES[e].scope;
    if (!scopes.includes(needed)) {
      throw new AppError('invalid_parameter', `event ${e} requires the scope ${needed}, which the endpoint's scopes do not include`, {
        param: 'events',
        rule: 'event_scope',
      });
    }
  }
  return { scopes, events };
}

function newSigningSecret(): string {
  return `whsec_${randomBase62(32)}`;
}

async function assertSlotFree(trx: Kysely<DB>, workspaceId: string, exceptId?: string) {
  let q = trx
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('status', '!=', 'disabled');
  if (exceptId) q = q.where('id', '!=', exceptId);
  const { n } = await q.executeTakeFirstOrThrow();
  if (Number(n) >= MAX_DELIVERING_ENDPOINTS) {
    throw new AppError(
      'limit_reached',
      `a workspace may have ${MAX_DELIVERING_ENDPOINTS} endpoints delivering at once (active or awaiting verification); disable one first`,
      { rule: 'endpoint_limit' },
    );
  }
}

async function getRow(db: Kysely<DB>, workspaceId: string, id: string): Promise<WebhookEndpointsTable> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  if (!row) throw notFound(workspaceId, id);
  return row;
}

function notFound(workspaceId: string, id: string): AppError {
  return new AppError('not_found', `no webhook endpoint ${id} in workspace ${workspaceId}; list them with: wsops endpoint list`);
}

export async function createEndpoint(
  services: EndpointsServices,
  workspaceId: string,
  input: {
    url: string;
    scopes: string | readonly string[];
    events: string | readonly string[];
    actor?: string;
    /** Also send the Standard Webhooks headers (off by default: the seed's signature alone). */
    standardWebhooks?: boolean;
    /** A content filter: JSON text or a parsed object (event-filter.ts); none: every event subscribed to. */
    filter?: unknown;
  } & DestinationOptions,
): Promise<EndpointView & { secret: string; verification_event_id: string }> {
  const { scopes, events } = checkSubscription(input.scopes, input.events);
  const filter = parseFilter(input.filter);
  const policy = { allowPrivate: services.config.allowPrivateWebhooks };
  // A broker destination's URL loses its password here; the password is sealed apart (ADR 52).
  const destination = parseDestination(input.url, input, policy);
  const checked = await checkEndpointUrl(destination.url, policy);
  const secret = newSigningSecret();
  const now = services.clock();
  const at = new Date(now).toISOString();
  const row: WebhookEndpointsTable = {
    id: newId('we'),
    workspace_id: workspaceId,
    url: checked.url.toString(),
    scopes: scopes.join(' '),
    events: events.join(' '),
    status: 'unverified',
    disabled_reason: null,
    secret_ciphertext: services.secretBox.seal(secret),
    previous_secret_ciphertext: null,
    previous_secret_expires_at: null,
    consecutive_failures: 0,
    last_failure: null,
    created_at: at,
    updated_at: at,
    verified_at: null,
    disabled_at: null,
    max_per_second: null,
    throttle_next_at: null,
    standard_webhooks: input.standardWebhooks ? 1 : 0,
    failing_since: null,
    destination_secret_ciphertext: destination.password === null ? null : services.secretBox.seal(destination.password),
    exchange: destination.exchange,
    routing_key: destination.routingKey,
    subject: destination.subject,
    filter,
  };
  const verification = await services.database.db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, services.database.engine, workspaceId);
    await assertSlotFree(trx, workspaceId);
    await trx.insertInto('webhook_endpoints').values(row).execute();
    await recordAudit(trx, {
      workspaceId,
      at,
      actor: input.actor ?? 'cli',
      action: 'endpoint.created',
      target: row.id,
      detail: { url: row.url, scopes, events, standard_webhooks: row.standard_webhooks === 1, ...(filter ? { filter } : {}) },
    });
    return emitVerification(trx, workspaceId, row.id, randomBytes(16).toString('hex'), now);
  });
  return { ...toView(row), secret, verification_event_id: verification.id };
}

export async function listEndpoints(services: EndpointsServices, workspaceId: string): Promise<EndpointView[]> {
  const rows = await services.database.db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at')
    .execute();
  return rows.map(toView);
}

/** A user switches an endpoint off: deliveries stop at once, its slot is freed, history stays. */
export async function disableEndpoint(services: EndpointsServices, workspaceId: string, id: string, actor = 'cli'): Promise<EndpointView> {
  const at = new Date(services.clock()).toISOString();
  const result = await services.database.db.transaction().execute(async (trx) => {
    const row = await getRow(trx, workspaceId, id);
    if (row.status === 'disabled') return { view: toView(row), held: 0 };
    const updated = { ...row, status: 'disabled' as const, disabled_reason: 'user' as const, disabled_at: at, updated_at: at };
    await trx
      .updateTable('webhook_endpoints')
      .set({ status: 'disabled', disabled_reason: 'user', disabled_at: at, updated_at: at })
      .where('id', '=', id)
      .execute();
    const held = await holdOwedJobs(trx, id, at);
    await recordAudit(trx, { workspaceId, at, actor, action: 'endpoint.disabled', target: id });
    return { view: toView(updated), held };
  });
  if (result.held > 0)
    services.logger
      .child({ component: 'endpoints' })
      .info({ endpoint_id: id, workspace_id: workspaceId, held: result.held }, 'deliveries held for a disabled endpoint');
  return result.view;
}

/**
 * Switching a disabled endpoint back on re-checks its URL and its slot and re-verifies it: it
 * becomes active when it answers the new verification with a 2xx, and then the deliveries it
 * still owed resume.
 */
export async function enableEndpoint(services: EndpointsServices, workspaceId: string, id: string, actor = 'cli') {
  return reverify(services, workspaceId, id, actor, 'enable');
}

/** Sends the verification again now, to an endpoint that has not answered one yet. */
export async function verifyEndpoint(services: EndpointsServices, workspaceId: string, id: string, actor = 'cli') {
  return reverify(services, workspaceId, id, actor, 'verify');
}

/** The state an endpoint must be in to be switched on (enable) or sent its verification again (verify). */
const REVERIFIED_FROM = { enable: 'disabled', verify: 'unverified' } as const;

function refuseReverify(id: string, status: string, mode: 'enable' | 'verify'): AppError {
  return mode === 'enable'
    ? new AppError('invalid_state', `endpoint ${id} is ${status}, not disabled; nothing to switch on`)
    : new AppError(
        'invalid_state',
        `endpoint ${id} is ${status}; only an endpoint awaiting verification can be re-verified (use enable for a disabled one)`,
      );
}

async function reverify(services: EndpointsServices, workspaceId: string, id: string, actor: string, mode: 'enable' | 'verify') {
  const current = await getRow(services.database.db, workspaceId, id);
  if (current.status !== REVERIFIED_FROM[mode]) throw refuseReverify(id, current.status, mode);
  await checkEndpointUrl(current.url, { allowPrivate: services.config.allowPrivateWebhooks });
  const now = services.clock();
  const at = new Date(now).toISOString();
  return services.database.db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, services.database.engine, workspaceId);
    if (mode === 'enable') await assertSlotFree(trx, workspaceId, id);
    // Only from the state checked above: of two enables at once one switches it on and the
    // other is refused, and a verify never puts back an endpoint that was verified meanwhile.
    const row = await trx
      .updateTable('webhook_endpoints')
      .set({ status: 'unverified', disabled_reason: null, disabled_at: null, consecutive_failures: 0, failing_since: null, updated_at: at })
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .where('status', '=', REVERIFIED_FROM[mode])
      .returningAll()
      .executeTakeFirst();
    if (!row) throw refuseReverify(id, (await getRow(trx, workspaceId, id)).status, mode);
    await recordAudit(trx, {
      workspaceId,
      at,
      actor,
      action: mode === 'enable' ? 'endpoint.enabled' : 'endpoint.verification_sent',
      target: id,
    });
    const eventId =
      (await resendOwedVerification(trx, id, now)) ??
      (await emitVerification(trx, workspaceId, id, randomBytes(16).toString('hex'), now)).id;
    return { ...toView(row), verification_event_id: eventId };
  });
}

/**
 * The verification an endpoint still owes (its retries pending, or held while it was disabled)
 * is made due now rather than joined by a second one: a receiver gets one challenge, and no
 * stale retry of an older one arrives after it is active. Returns that event's id, or
 * undefined when nothing is owed (a new verification is then emitted).
 */
async function resendOwedVerification(trx: Kysely<DB>, endpointId: string, now: number): Promise<string | undefined> {
  const owed = await trx
    .selectFrom('delivery_jobs')
    .select(['id', 'event_id'])
    .where('endpoint_id', '=', endpointId)
    .where('event_type', '=', VERIFICATION_EVENT)
    .where('state', 'in', ['pending', 'held'])
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!owed) return undefined;
  // An attempt in flight under a live lease is left to finish: its answer decides.
  await makeDueNow(trx, [owed.id], now);
  return owed.event_id;
}

/** A new secret signs at once; the old one keeps signing beside it for the grace period. */
export async function rotateSecret(
  services: EndpointsServices,
  workspaceId: string,
  id: string,
  graceHours = DEFAULT_ROTATION_GRACE_HOURS,
  actor = 'cli',
) {
  if (!Number.isFinite(graceHours) || graceHours < 0 || graceHours > MAX_ROTATION_GRACE_HOURS) {
    throw new AppError('invalid_parameter', `grace period must be 0 to ${MAX_ROTATION_GRACE_HOURS} hours; got ${graceHours}`, {
      param: 'grace_hours',
    });
  }
  const now = services.clock();
  const at = new Date(now).toISOString();
  const secret = newSigningSecret();
  const expires = graceHours > 0 ? new Date(now + graceHours * 3_600_000).toISOString() : null;
  return services.database.db.transaction().execute(async (trx) => {
    // One statement: the previous secret is the one stored when it runs, never one read before
    // it. Of two rotations at once, the later keeps the earlier's secret signing for its grace.
    const row = await trx
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        secret_ciphertext: services.secretBox.seal(secret),
        previous_secret_ciphertext: graceHours > 0 ? eb.ref('secret_ciphertext') : null,
        previous_secret_expires_at: expires,
        updated_at: at,
      }))
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .returningAll()
      .executeTakeFirst();
    if (!row) throw notFound(workspaceId, id);
    await recordAudit(trx, { workspaceId, at, actor, action: 'endpoint.secret_rotated', target: id, detail: { grace_hours: graceHours } });
    return { ...toView(row), secret };
  });
}

/**
 * Switches the Standard Webhooks headers on or off for an endpoint; the seed's
 * X-Service-Signature is sent either way. Takes effect from the next attempt.
 */
export async function setStandardWebhooks(services: EndpointsServices, workspaceId: string, id: string, on: boolean, actor = 'cli') {
  const at = new Date(services.clock()).toISOString();
  return services.database.db.transaction().execute(async (trx) => {
    const row = await getRow(trx, workspaceId, id);
    await trx
      .updateTable('webhook_endpoints')
      .set({ standard_webhooks: on ? 1 : 0, updated_at: at })
      .where('id', '=', id)
      .execute();
    await recordAudit(trx, { workspaceId, at, actor, action: 'endpoint.signatures_set', target: id, detail: { standard_webhooks: on } });
    return toView({ ...row, standard_webhooks: on ? 1 : 0, updated_at: at });
  });
}

/** The secrets that sign a delivery now: the current one, and the previous one during its grace. */
export function signingSecrets(
  services: EndpointsServices,
  row: Pick<WebhookEndpointsTable, 'secret_ciphertext' | 'previous_secret_ciphertext' | 'previous_secret_expires_at'>,
  now: number,
): string[] {
  const secrets = [services.secretBox.open(row.secret_ciphertext)];
  if (row.previous_secret_ciphertext && row.previous_secret_expires_at && Date.parse(row.previous_secret_expires_at) > now) {
    secrets.push(services.secretBox.open(row.previous_secret_ciphertext));
  }
  return secrets;
}
