/**
 * The worker's alert round: records the alerts now due (alerts/stages.ts) and mails the pending
 * ones to the workspace's console admins and added recipients (alerts/recipients.ts). It runs on its own timer beside the dispatcher, so a
 * slow or down mail server only delays alerts, never a webhook delivery. A failed send is
 * retried with backoff, then given up (the console shows it either way).
 */
import type { Transporter } from 'nodemailer';
import { recordAudit } from '../audit/audit.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { redactUrl } from '../redact-url.js';
import type { Database } from '../store/database.js';
import type { EndpointAlertsTable } from '../store/schema.js';
import { composeAlert, durationWords } from './mail.js';
import { alertAddresses } from './recipients.js';
import { recordDueAlerts } from './stages.js';

/** What this file takes of the services built at start (services.ts). */
export interface AlertRoundServices {
  config: Config;
  database: Database;
  metrics: Metrics;
  clock: Clock;
  logger: Logger;
}

const MIN = 60_000;
/** The wait before each retry of a mail; after the last one the alert is given up. */
export const ALERT_RETRY_DELAYS_MS: readonly number[] = [1 * MIN, 5 * MIN, 15 * MIN, 30 * MIN, 60 * MIN, 120 * MIN, 240 * MIN];
/** A claimed alert is left alone this long by other workers while one sends it. */
const CLAIM_MS = 5 * MIN;

export interface AlertRoundResult {
  recorded: number;
  sent: number;
  failed: number;
}

/** One round: what is due is recorded, then every pending alert whose time has come is tried once. */
export async function runAlertRound(services: AlertRoundServices, transport: Transporter | undefined): Promise<AlertRoundResult> {
  const now = services.clock();
  const recorded = await recordDueAlerts(
    services.database.db,
    now,
    transport !== undefined,
    services.config.alertFailingAfterMinutes * MIN,
  );
  const result: AlertRoundResult = { recorded: recorded.length, sent: 0, failed: 0 };
  if (!transport) return result;
  const due = await services.database.db
    .selectFrom('endpoint_alerts')
    .selectAll()
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', new Date(now).toISOString())
    .orderBy('created_at')
    .execute();
  for (const alert of due) {
    if (!(await claim(services, alert, now))) continue;
    if (await sendOne(services, transport, alert)) result.sent++;
    else result.failed++;
  }
  return result;
}

/** Moves the alert's next try past the claim time, unless another worker did so first. */
async function claim(services: AlertRoundServices, alert: EndpointAlertsTable, now: number): Promise<boolean> {
  const claimed = await services.database.db
    .updateTable('endpoint_alerts')
    .set({ next_attempt_at: new Date(now + CLAIM_MS).toISOString() })
    .where('id', '=', alert.id)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '=', alert.next_attempt_at)
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
}

async function sendOne(services: AlertRoundServices, transport: Transporter, alert: EndpointAlertsTable): Promise<boolean> {
  const db = services.database.db;
  const log = services.logger.child({ component: 'alerts', alert_id: alert.id, endpoint_id: alert.endpoint_id });
  const endpoint = await db.selectFrom('webhook_endpoints').select('url').where('id', '=', alert.endpoint_id).executeTakeFirst();
  const recipients = await alertAddresses(db, alert.workspace_id);
  const at = () => new Date(services.clock()).toISOString();
  if (!endpoint || recipients.length === 0) {
    // Nobody to tell (the endpoint was deleted, or the workspace has no console admin and no
    // added recipient): the alert stays in the console.
    await db
      .updateTable('endpoint_alerts')
      .set({
        state: 'console',
        last_error: endpoint ? 'the workspace has no console admin or alert recipient to mail' : 'the endpoint no longer exists',
      })
      .where('id', '=', alert.id)
      .execute();
    return false;
  }
  const mail = composeAlert({
    stage: alert.stage,
    endpointId: alert.endpoint_id,
    url: endpoint.url,
    errorClass: alert.error_class,
    lastFailure: alert.last_failure,
    retentionDays: services.config.deliveryRetentionDays,
    failingAfterMinutes: services.config.alertFailingAfterMinutes,
    deliveriesUrl: `${services.config.baseUrl}/console/webhooks/${encodeURIComponent(alert.endpoint_id)}/deliveries`,
  });
  try {
    await transport.sendMail({ from: services.config.alertFrom, to: recipients, subject: mail.subject, text: mail.text });
  } catch (err) {
    const attempts = alert.attempts + 1;
    const delay = ALERT_RETRY_DELAYS_MS[attempts - 1];
    // A mail server's error may echo the login; only the message, with any URL redacted, is kept.
    const error = redactUrl((err as Error).message ?? String(err)).slice(0, 500);
    await db
      .updateTable('endpoint_alerts')
      .set({
        attempts,
        last_error: error,
        ...(delay === undefined ? { state: 'failed' as const } : { next_attempt_at: new Date(services.clock() + delay).toISOString() }),
      })
      .where('id', '=', alert.id)
      .execute();
    services.metrics.alertMail(delay === undefined ? 'given_up' : 'failed');
    if (delay === undefined) log.error({ attempts, error }, 'failure alert mail given up after its retries');
    else log.warn({ attempts, error, retry_in_ms: delay }, 'failure alert mail not sent; retried later');
    return false;
  }
  const sentAt = at();
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('endpoint_alerts')
      .set({ state: 'sent', attempts: alert.attempts + 1, sent_at: sentAt, recipients: recipients.join(', '), last_error: null })
      .where('id', '=', alert.id)
      .execute();
    await recordAudit(trx, {
      workspaceId: alert.workspace_id,
      at: sentAt,
      actor: 'system',
      action: 'endpoint.alert_sent',
      target: alert.endpoint_id,
      detail: {
        stage: alert.stage,
        alert_id: alert.id,
        recipients: recipients.length,
        ...(alert.stage === 'failing' ? { failing_after: durationWords(services.config.alertFailingAfterMinutes) } : {}),
      },
    });
  });
  services.metrics.alertMail('sent');
  log.info({ stage: alert.stage, recipients: recipients.length }, 'failure alert mailed');
  return true;
}
