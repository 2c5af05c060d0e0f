import { type AuditWords, auditText } from '../../audit/audit.js';

/** The audit trail's words for deliveries: test events, resends, recoveries, an endpoint's throttle. */
export const DELIVERY_AUDIT_WORDS = {
  'endpoint.test_sent': (e) => `Sent a test event to webhook endpoint ${e.target}`,
  'endpoint.throttle_set': ({ target, detail: d }) =>
    typeof d.max_per_second === 'number'
      ? `Throttled webhook endpoint ${target} to ${d.max_per_second} deliveries per second`
      : `Removed the throttle of webhook endpoint ${target}`,
  'delivery.resent': ({ target, detail: d }) =>
    `Resent ${auditText(d.event_type) ?? 'an event'} ${auditText(d.event_id) ?? ''} to webhook endpoint ${target}`.replace('  ', ' '),
  'deliveries.recovered': ({ target, detail: d }) =>
    `Recovered ${typeof d.recovered === 'number' ? d.recovered : 'the'} failed deliveries of webhook endpoint ${target}${auditText(d.since) ? ` since ${auditText(d.since)}` : ''}`,
} as const satisfies AuditWords;

declare module '../../audit/audit.js' {
  interface AuditActions extends Record<keyof typeof DELIVERY_AUDIT_WORDS, true> {}
}
