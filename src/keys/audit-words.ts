import { type AuditWords, auditText, namedTarget } from '../audit/audit.js';

/** The audit trail's words for API keys. */
export const KEY_AUDIT_WORDS = {
  'key.created': (e) => namedTarget('Created API key', e, e.detail.name),
  'key.revoked': (e) => `Revoked API key ${e.target}`,
  'key.rolled': ({ target, detail: d }) =>
    d.grace === '0'
      ? `Rolled API key ${target} into ${auditText(d.successor) ?? 'a new key'} (old key revoked at once)`
      : `Rolled API key ${target} into ${auditText(d.successor) ?? 'a new key'} (old key revoked at ${auditText(d.revoked_at) ?? 'the end of the grace'})`,
  'key.allowlist_changed': ({ target, detail: d }) =>
    Array.isArray(d.allowed_ips) && d.allowed_ips.length
      ? `Limited API key ${target} to ${d.allowed_ips.join(', ')}`
      : `Let API key ${target} be used from any address`,
} as const satisfies AuditWords;

declare module '../audit/audit.js' {
  interface AuditActions extends Record<keyof typeof KEY_AUDIT_WORDS, true> {}
}
