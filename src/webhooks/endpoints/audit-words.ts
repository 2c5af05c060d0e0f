import { type AuditWords, auditText } from '../../audit/audit.js';

/** The audit trail's words for webhook endpoints: registration, switching on and off, secrets, filters, signatures. */
export const ENDPOINT_AUDIT_WORDS = {
  'endpoint.created': ({ target, detail: d }) =>
    auditText(d.url) ? `Registered webhook endpoint ${target} (${auditText(d.url)})` : `Registered webhook endpoint ${target}`,
  'endpoint.disabled': ({ target, detail: d }) =>
    d.reason === 'failures' ? `Webhook endpoint ${target} was disabled after repeated failures` : `Disabled webhook endpoint ${target}`,
  'endpoint.enabled': (e) => `Switched on webhook endpoint ${e.target} (verification sent again)`,
  'endpoint.verification_sent': (e) => `Resent the verification of webhook endpoint ${e.target}`,
  'endpoint.secret_rotated': ({ target, detail: d }) =>
    typeof d.grace_hours === 'number'
      ? `Rotated the signing secret of webhook endpoint ${target} (old secret valid ${d.grace_hours} more hours)`
      : `Rotated the signing secret of webhook endpoint ${target}`,
  'endpoint.filter_set': ({ target, detail: d }) =>
    typeof d.filter === 'string'
      ? `Set the content filter of webhook endpoint ${target}: ${d.filter.slice(0, 200)}`
      : `Removed the content filter of webhook endpoint ${target}`,
  'endpoint.signatures_set': ({ target, detail: d }) =>
    d.standard_webhooks === true
      ? `Webhook endpoint ${target} is sent the Standard Webhooks headers beside X-Service-Signature`
      : `Webhook endpoint ${target} is sent X-Service-Signature alone`,
} as const satisfies AuditWords;

declare module '../../audit/audit.js' {
  interface AuditActions extends Record<keyof typeof ENDPOINT_AUDIT_WORDS, true> {}
}
