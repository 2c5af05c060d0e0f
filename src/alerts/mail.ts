/**
 * The failure alert mail: its words, and the transport that sends it (nodemailer, ADR 39).
 * Kept apart from the scheduling so the words can be read and tested alone.
 */
import type { Transporter } from 'nodemailer';
import { errorClassHelp } from '../webhooks/destinations/error-classes.js';
import { FAILURES_BEFORE_DISABLE } from '../webhooks/queue/schedule.js';
import type { AlertStage } from './stages.js';

export interface AlertMail {
  subject: string;
  text: string;
}

export interface AlertFacts {
  stage: AlertStage;
  endpointId: string;
  url: string;
  errorClass: string | null;
  lastFailure: string | null;
  /** The endpoint's deliveries page in the console. */
  deliveriesUrl: string;
  /** WSOPS_DELIVERY_RETENTION_DAYS: how long held deliveries are kept. */
  retentionDays: number;
  /** WSOPS_ALERT_FAILING_AFTER_MINUTES: the failing stage's threshold. */
  failingAfterMinutes: number;
}

/** The failing threshold in words: whole hours as hours (`1 hour`), else minutes. */
export function durationWords(minutes: number): string {
  const [n, unit] = minutes % 60 === 0 ? [minutes / 60, 'hour'] : [minutes, 'minute'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

export function composeAlert(f: AlertFacts): AlertMail {
  const heading = {
    failing: `Webhook endpoint ${f.endpointId} has been failing for over ${durationWords(f.failingAfterMinutes)}`,
    disabled: `Webhook endpoint ${f.endpointId} was disabled after ${FAILURES_BEFORE_DISABLE} failed deliveries in a row`,
    recovered: `Webhook endpoint ${f.endpointId} has recovered`,
  }[f.stage];
  const what = {
    failing: 'Every delivery to it has failed since then. It is retried on schedule, and disabled if the failures go on.',
    // What store/event-receivers.ts and retention.ts do, word for word.
    disabled: `Deliveries to it are held, not lost: those it already owed, and every event it subscribes to raised while it stays disabled (each kept ${f.retentionDays} days). Fix the receiver, then switch the endpoint on in the console: it is verified again and the held deliveries are sent, each once.`,
    recovered: 'It answers deliveries again. Nothing more to do.',
  }[f.stage];
  const help = errorClassHelp(f.errorClass);
  const lines = [
    heading,
    '',
    `Endpoint: ${f.endpointId}`,
    `URL: ${f.url}`,
    ...(f.stage === 'recovered'
      ? []
      : [
          `Last error class: ${f.errorClass ?? 'unknown'}${help ? ` (${help})` : ''}`,
          ...(f.lastFailure ? [`Last failure: ${f.lastFailure}`] : []),
        ]),
    '',
    what,
    '',
    `Deliveries: ${f.deliveriesUrl}`,
  ];
  return { subject: `[wsops] ${heading}`, text: `${lines.join('\n')}\n` };
}

/**
 * A transport for the SMTP URL. Deadlines keep a mail server that does not answer from holding
 * an alert round for long; the retry comes at the next round.
 */
export async function createAlertTransport(smtpUrl: string): Promise<Transporter> {
  // Loaded only where alerts are mailed: nodemailer is a measurable part of a start (ADR 37).
  const { default: nodemailer } = await import('nodemailer');
  return nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
}
