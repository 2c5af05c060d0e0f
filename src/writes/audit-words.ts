import type { AuditWords } from '../audit/audit.js';

/** The audit trail's words for the system of record's bulk writes. */
export const WRITE_AUDIT_WORDS = {
  'record.imported': ({ target, detail: d }) =>
    `Imported records (${target}): ${Number(d.lines) || 0} lines, ${Number(d.refused) || 0} refused${d.committed === false ? ', nothing committed' : ''}`,
} as const satisfies AuditWords;

declare module '../audit/audit.js' {
  interface AuditActions extends Record<keyof typeof WRITE_AUDIT_WORDS, true> {}
}
