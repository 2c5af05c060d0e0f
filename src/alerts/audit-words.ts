import { type AuditWords, auditText } from '../audit/audit.js';

/** The audit trail's words for failure alerts: the mails, their recipients, the test alert. */
export const ALERT_AUDIT_WORDS = {
  'endpoint.alert_sent': ({ target, detail: d }) => {
    const what =
      d.stage === 'failing'
        ? // The threshold when it was mailed (WSOPS_ALERT_FAILING_AFTER_MINUTES); entries of before it was a setting: an hour.
          `has been failing for over ${auditText(d.failing_after) ?? 'an hour'}`
        : d.stage === 'disabled'
          ? 'was disabled after failures'
          : d.stage === 'recovered'
            ? 'has recovered'
            : 'has failures';
    const to = typeof d.recipients === 'number' ? ` to ${d.recipients} console admin${d.recipients === 1 ? '' : 's'}` : '';
    return `Mailed an alert${to}: webhook endpoint ${target} ${what}`;
  },
  'endpoint.alert_recipient_added': (e) => `Added ${e.target} to the failure alert recipients`,
  'endpoint.alert_recipient_removed': (e) => `Removed ${e.target} from the failure alert recipients`,
  'endpoint.test_alert_sent': ({ detail: d }) => {
    const to = typeof d.recipients === 'number' ? `${d.recipients} recipient${d.recipients === 1 ? '' : 's'}` : 'the recipients';
    return d.sent === true
      ? `Mailed a test failure alert to ${to}`
      : `A test failure alert to ${to} was not accepted${auditText(d.server_response) ? `: ${auditText(d.server_response)}` : ''}`;
  },
} as const satisfies AuditWords;

declare module '../audit/audit.js' {
  interface AuditActions extends Record<keyof typeof ALERT_AUDIT_WORDS, true> {}
}
