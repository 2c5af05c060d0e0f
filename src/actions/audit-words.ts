import { type AuditWords, auditText } from '../audit/audit.js';

/** The audit trail's words for domain actions (every `action.<name>`), corrections and deletions. */
export const ACTION_AUDIT_WORDS = {
  'record.corrected': ({ target, detail: d }) =>
    `Corrected ${auditText(d.register) ?? 'record'} ${target}${Array.isArray(d.fields) ? `: ${d.fields.join(', ')}` : ''}`,
  'record.deleted': ({ target, detail: d }) => `Deleted ${auditText(d.register) ?? 'record'} ${target}`,
  'action.*': ({ action, target }) => `Ran ${action.slice('action.'.length).replace(/_/g, ' ')}${target ? ` on ${target}` : ''}`,
} as const satisfies AuditWords;

declare module '../audit/audit.js' {
  interface AuditActions extends Record<Exclude<keyof typeof ACTION_AUDIT_WORDS, 'action.*'>, true> {
    /** A domain action's entry: `action.asset.assign`. */
    [action: `action.${string}`]: true;
  }
}
