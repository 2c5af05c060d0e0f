/**
 * "Send a test alert" (console and `wsops alerts test`): one mail through the same path as the
 * real alerts (WSOPS_SMTP_URL, WSOPS_ALERT_FROM, the workspace's admins and added recipients), sent
 * now, and the mail server's answer reported as it was given: an operator checks the mail path
 * before a real failure, not after.
 */
import { recordAudit } from '../audit/audit.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { redactUrl } from '../redact-url.js';
import type { Database } from '../store/database.js';
import { createAlertTransport } from './mail.js';
import { alertAddresses } from './recipients.js';

/** What this file takes of the services built at start (services.ts). */
export interface TestAlertServices {
  config: Config;
  database: Database;
  clock: Clock;
}

export interface TestAlertResult {
  /** Whether the server accepted the mail for at least one recipient. */
  sent: boolean;
  recipients: string[];
  /** Addresses the server accepted, and refused. */
  accepted: string[];
  rejected: string[];
  /** The server's final answer (`250 …`), or its error. */
  server_response: string;
}

export async function sendTestAlert(services: TestAlertServices, workspaceId: string, actor: string): Promise<TestAlertResult> {
  const { smtpUrl, alertFrom } = services.config;
  if (!smtpUrl || !alertFrom) {
    throw new AppError(
      'invalid_state',
      'no mail server is set (WSOPS_SMTP_URL and WSOPS_ALERT_FROM): alerts are shown in the console only; set both and restart to mail them',
    );
  }
  const db = services.database.db;
  const recipients = await alertAddresses(db, workspaceId);
  if (recipients.length === 0) {
    throw new AppError(
      'invalid_state',
      'nobody to mail: the workspace has no console admin and no alert recipient; add one (console Webhooks › Alerts, or wsops alerts recipients --add)',
    );
  }
  const transport = await createAlertTransport(smtpUrl);
  const at = new Date(services.clock()).toISOString();
  let result: TestAlertResult;
  try {
    const info = await transport.sendMail({
      from: alertFrom,
      to: recipients,
      subject: '[wsops] Test alert: the failure alerts reach you',
      text: `This is a test of the webhook failure alerts of workspace ${workspaceId}, sent at ${at}.\n\nReal alerts come from this address to these recipients: ${recipients.join(', ')}.\nNothing to do.\n`,
    });
    const accepted = (info.accepted as unknown[]).map(String);
    const rejected = (info.rejected as unknown[]).map(String);
    result = { sent: accepted.length > 0, recipients, accepted, rejected, server_response: String(info.response ?? '') };
  } catch (err) {
    // A mail server's error may echo the login; only the message, with any URL redacted, is kept.
    const error = redactUrl((err as Error).message ?? String(err)).slice(0, 500);
    result = { sent: false, recipients, accepted: [], rejected: recipients, server_response: error };
  } finally {
    transport.close();
  }
  await recordAudit(db, {
    workspaceId,
    at,
    actor,
    action: 'endpoint.test_alert_sent',
    detail: { sent: result.sent, recipients: recipients.length, server_response: result.server_response.slice(0, 200) },
  });
  return result;
}
