import { type AuditWords, auditText } from '../audit/audit.js';

/** The audit trail's words for console sign-in: admins, links, second factors, single sign-on. */
export const SIGN_IN_AUDIT_WORDS = {
  'admin.added': ({ target, detail: d }) =>
    auditText(d.email) ? `Invited console admin ${auditText(d.email)}` : `Invited console admin ${target}`,
  'admin.link_issued': ({ target, detail: d }) =>
    auditText(d.email) ? `Issued a new sign-in link for ${auditText(d.email)}` : `Issued a new sign-in link for admin ${target}`,
  'admin.break_glass_issued': ({ target, detail: d }) =>
    `Issued an emergency sign-in link, past single sign-on, for ${auditText(d.email) ?? `admin ${target}`}${auditText(d.reason) ? `: ${auditText(d.reason)}` : ''}`,
  'admin.break_glass_used': ({ target, detail: d }) =>
    `${auditText(d.email) ?? `Admin ${target}`} signed in with an emergency link, past single sign-on`,
  'admin.removed': ({ target, detail: d }) =>
    auditText(d.email) ? `Removed console admin ${auditText(d.email)}` : `Removed console admin ${target}`,
  'admin.totp_enabled': (e) => `Set up an authenticator app as the second factor of admin ${e.target}`,
  'admin.totp_disabled': (e) => `Removed the authenticator app of admin ${e.target}`,
  'admin.recovery_code_used': (e) => `Admin ${e.target} signed in with a recovery code`,
  'admin.passkey_added': ({ target, detail: d }) =>
    `Added a passkey${auditText(d.name) ? ` (${auditText(d.name)})` : ''} as a second factor of admin ${target}`,
  'admin.passkey_removed': ({ target, detail: d }) =>
    `Removed the passkey${auditText(d.name) ? ` (${auditText(d.name)})` : ''} of admin ${target}`,
  'admin.passkey_used': ({ target, detail: d }) =>
    `Admin ${target} signed in with a passkey${auditText(d.name) ? ` (${auditText(d.name)})` : ''}`,
  'workspace.second_factor_required': () => 'Required a second factor for every console admin',
  'workspace.second_factor_optional': () => 'Made the second factor optional for console admins',
  'workspace.sso_set': ({ detail: d }) =>
    auditText(d.issuer)
      ? `Set up single sign-on with ${auditText(d.issuer)}${auditText(d.domain) ? ` for ${auditText(d.domain)}` : ''}`
      : 'Set up single sign-on',
  'workspace.sso_removed': () => 'Removed single sign-on',
} as const satisfies AuditWords;

declare module '../audit/audit.js' {
  interface AuditActions extends Record<keyof typeof SIGN_IN_AUDIT_WORDS, true> {}
}
