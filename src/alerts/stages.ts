/**
 * Which failure alerts are due: an endpoint failing for WSOPS_ALERT_FAILING_AFTER_MINUTES, disabled after
 * failures in a row, and recovered after either. Each is recorded once per endpoint, stage and
 * failure episode (the endpoint's `failing_since`): the table's unique key makes "once" hold
 * with several workers checking at the same time. Mailing them is alerts/send.ts's concern.
 */
import type { Kysely } from '#kysely';
import { newId } from '../ids.js';
import type { DB, EndpointAlertsTable } from '../store/schema.js';

export type AlertStage = EndpointAlertsTable['stage'];

interface Due {
  workspace_id: string;
  endpoint_id: string;
  stage: AlertStage;
  episode: string;
  last_failure: string | null;
}

async function lastErrorClass(db: Kysely<DB>, endpointId: string): Promise<string | null> {
  const row = await db
    .selectFrom('delivery_attempts')
    .select('error_class')
    .where('endpoint_id', '=', endpointId)
    .where('outcome', '=', 'failed')
    .orderBy('attempted_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.error_class ?? null;
}

/** `failingAfterMs`: how long an endpoint fails without a success before it is alerted about (the setting). */
async function dueAlerts(db: Kysely<DB>, now: number, failingAfterMs: number): Promise<Due[]> {
  const cutoff = new Date(now - failingAfterMs).toISOString();
  const failing = await db
    .selectFrom('webhook_endpoints')
    .select(['workspace_id', 'id', 'failing_since', 'last_failure'])
    .where('status', '=', 'active')
    .where('failing_since', 'is not', null)
    .where('failing_since', '<=', cutoff)
    .execute();
  const disabled = await db
    .selectFrom('webhook_endpoints')
    .select(['workspace_id', 'id', 'failing_since', 'last_failure'])
    .where('status', '=', 'disabled')
    .where('disabled_reason', '=', 'failures')
    // Endpoints disabled before runs of failures were tracked have none: an upgrade does not
    // mail about old news.
    .where('failing_since', 'is not', null)
    .execute();
  // Recovered: an episode that was alerted about, on an endpoint now active whose run of
  // failures ended (a success, or switched on and verified again) and not yet told so.
  const recovered = await db
    .selectFrom('endpoint_alerts as a')
    .innerJoin('webhook_endpoints as e', 'e.id', 'a.endpoint_id')
    .select(['a.workspace_id', 'a.endpoint_id', 'a.episode'])
    .distinct()
    .where('a.stage', 'in', ['failing', 'disabled'])
    .where('e.status', '=', 'active')
    .where((eb) => eb.or([eb('e.failing_since', 'is', null), eb('e.failing_since', '!=', eb.ref('a.episode'))]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('endpoint_alerts as r')
            .select('r.id')
            .whereRef('r.endpoint_id', '=', 'a.endpoint_id')
            .whereRef('r.episode', '=', 'a.episode')
            .where('r.stage', '=', 'recovered'),
        ),
      ),
    )
    .execute();
  return [
    ...failing.map((e) => ({
      workspace_id: e.workspace_id,
      endpoint_id: e.id,
      stage: 'failing' as const,
      episode: e.failing_since as string,
      last_failure: e.last_failure,
    })),
    ...disabled.map((e) => ({
      workspace_id: e.workspace_id,
      endpoint_id: e.id,
      stage: 'disabled' as const,
      episode: e.failing_since as string,
      last_failure: e.last_failure,
    })),
    ...recovered.map((a) => ({ ...a, stage: 'recovered' as const, last_failure: null })),
  ];
}

/**
 * Records the alerts now due. `mailing`: whether a mail server is set; without one an alert is
 * recorded for the console only. Returns the alerts recorded by this call.
 */
export async function recordDueAlerts(
  db: Kysely<DB>,
  now: number,
  mailing: boolean,
  failingAfterMs: number,
): Promise<{ id: string; stage: AlertStage }[]> {
  const at = new Date(now).toISOString();
  const recorded: { id: string; stage: AlertStage }[] = [];
  for (const due of await dueAlerts(db, now, failingAfterMs)) {
    const id = newId('alr');
    const inserted = await db
      .insertInto('endpoint_alerts')
      .values({
        id,
        workspace_id: due.workspace_id,
        endpoint_id: due.endpoint_id,
        stage: due.stage,
        episode: due.episode,
        error_class: due.stage === 'recovered' ? null : await lastErrorClass(db, due.endpoint_id),
        last_failure: due.last_failure,
        state: mailing ? 'pending' : 'console',
        attempts: 0,
        next_attempt_at: at,
        created_at: at,
      })
      .onConflict((oc) => oc.columns(['endpoint_id', 'stage', 'episode']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) recorded.push({ id, stage: due.stage });
  }
  return recorded;
}

/** An endpoint's alerts, newest first, for the console. */
export function listEndpointAlerts(db: Kysely<DB>, workspaceId: string, endpointId: string, limit = 50) {
  return db
    .selectFrom('endpoint_alerts')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('endpoint_id', '=', endpointId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
