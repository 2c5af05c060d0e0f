/**
 * The worker's alert rounds, one at a time: a round still waiting on the mail server is not
 * joined by a second. Mail goes through a transport made at the first round, and only when
 * WSOPS_SMTP_URL is set, so nodemailer loads only where alerts are mailed.
 */
import type { Transporter } from 'nodemailer';
import type { Logger } from '../logger.js';
import { createAlertTransport } from './mail.js';
import { type AlertRoundServices, runAlertRound } from './send.js';

export interface AlertRounds {
  /** One round; a failure is logged (the next round retries), never thrown. */
  run(): Promise<void>;
  /** Closes the mail transport, if one was made. */
  close(): Promise<void>;
}

export function alertRounds(services: AlertRoundServices, log: Logger): AlertRounds {
  const smtpUrl = services.config.smtpUrl;
  let transport: Promise<Transporter> | undefined;
  let running = false;
  return {
    async run() {
      if (running) return;
      running = true;
      try {
        if (smtpUrl && !transport) transport = createAlertTransport(smtpUrl);
        const mail = await transport;
        const r = await runAlertRound(services, mail);
        if (r.recorded > 0)
          log.info(r, mail ? 'failure alerts recorded' : 'failure alerts recorded (console only: WSOPS_SMTP_URL is unset)');
      } catch (err) {
        log.error({ err }, 'failure alert round failed; retried in a minute');
      } finally {
        running = false;
      }
    },
    async close() {
      (await transport?.catch(() => undefined))?.close();
    },
  };
}
