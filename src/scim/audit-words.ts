import { type AuditWords, namedTarget } from '../audit/audit.js';

/** The audit trail's words for SCIM: its tokens, and the people an identity provider writes. */
export const SCIM_AUDIT_WORDS = {
  'scim.token_created': (e) => namedTarget('Created SCIM token', e, e.detail.name),
  'scim.token_revoked': (e) => `Revoked SCIM token ${e.target}`,
  'record.scim_created': (e) => `The identity provider created person ${e.target} (SCIM)`,
  'record.scim_restored': (e) => `The identity provider created person ${e.target} again, after a SCIM delete had kept it (SCIM)`,
  'record.scim_replaced': (e) => `The identity provider replaced person ${e.target} (SCIM)`,
  'record.scim_patched': (e) => `The identity provider changed person ${e.target} (SCIM)`,
  'record.scim_deleted': (e) => `The identity provider deleted person ${e.target} (SCIM)`,
  'record.scim_deactivated': (e) =>
    `The identity provider deleted person ${e.target}; other records name it, so it was kept as INACTIVE (SCIM)`,
} as const satisfies AuditWords;

declare module '../audit/audit.js' {
  interface AuditActions extends Record<keyof typeof SCIM_AUDIT_WORDS, true> {}
}
