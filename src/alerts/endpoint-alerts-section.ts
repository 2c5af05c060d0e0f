/**
 * The endpoint page's alert history: each failure alert (failing, disabled, recovered), whether
 * it was mailed, is waiting for a retry, was given up, or is shown here only (no mail server
 * set). The rules are src/alerts/'s; the page only shows them.
 */

import { type Html, html } from '../console-kit/html.js';
import { type BadgeTone, badge, formatTime, scrollingTable } from '../console-kit/layout.js';
import type { EndpointAlertsTable } from '../store/schema.js';
import { durationWords } from './mail.js';

/** Each stage in words; the failing one by the threshold in force (WSOPS_ALERT_FAILING_AFTER_MINUTES). */
const stages = (failingAfterMinutes: number): Record<EndpointAlertsTable['stage'], string> => ({
  failing: `Failing for over ${durationWords(failingAfterMinutes)}`,
  disabled: 'Disabled after failures',
  recovered: 'Recovered',
});

function delivery(a: EndpointAlertsTable): Html {
  const states: Record<EndpointAlertsTable['state'], [BadgeTone, string]> = {
    sent: ['good', 'Mailed'],
    pending: a.attempts > 0 ? ['warn', 'Not sent yet, retrying'] : ['info', 'Waiting to be mailed'],
    failed: ['bad', 'Not sent, given up'],
    console: ['neutral', 'Console only'],
  };
  const [tone, text] = states[a.state];
  const detail =
    a.state === 'sent'
      ? html` to ${a.recipients ?? ''} at ${formatTime(a.sent_at, '—', 'second')}`
      : a.state === 'console' && a.last_error === null
        ? html` <span class="muted">(no mail server set: WSOPS_SMTP_URL)</span>`
        : a.last_error
          ? html`<br><span class="muted">After ${a.attempts} tr${a.attempts === 1 ? 'y' : 'ies'}: ${a.last_error}</span>`
          : '';
  return html`${badge(tone, text)}${detail}`;
}

/** `failingAfterMinutes`: WSOPS_ALERT_FAILING_AFTER_MINUTES. */
export function alertsSection(alerts: readonly EndpointAlertsTable[], failingAfterMinutes: number): Html {
  const named = stages(failingAfterMinutes);
  const body = alerts.length
    ? scrollingTable(
        'Failure alerts',
        html`<table class="endpoint-alerts">
  <caption class="visually-hidden">Failure alerts about this endpoint, newest first</caption>
  <thead><tr><th scope="col">Raised</th><th scope="col">Alert</th><th scope="col">Last error class</th><th scope="col">Mail</th></tr></thead>
  <tbody>${alerts.map(
    (a) =>
      html`<tr data-alert="${a.stage}"><td>${formatTime(a.created_at, '—', 'second')}</td><td>${named[a.stage]}</td><td>${a.error_class ? html`<code>${a.error_class}</code>` : '—'}</td><td>${delivery(a)}</td></tr>`,
  )}</tbody></table>`,
      )
    : html`<p class="muted">No alerts. The console admins and the workspace's other <a href="/console/webhooks/alerts">alert recipients</a> are told when this endpoint fails for over ${durationWords(failingAfterMinutes)}, is disabled after failures, and recovers.</p>`;
  return html`<section aria-labelledby="alerts-h" id="alerts">
  <h2 id="alerts-h">Failure alerts</h2>
  ${body}
</section>`;
}
