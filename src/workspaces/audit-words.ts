import { type AuditWords, auditText } from '../audit/audit.js';

/** The audit trail's words for a workspace and its modules. */
export const WORKSPACE_AUDIT_WORDS = {
  'module.installed': (e) => `Installed the ${e.target} module`,
  'module.uninstalled': (e) => `Uninstalled the ${e.target} module`,
  'workspace.created': ({ detail: d }) => (auditText(d.name) ? `Created the workspace (${auditText(d.name)})` : 'Created the workspace'),
} as const satisfies AuditWords;

declare module '../audit/audit.js' {
  interface AuditActions extends Record<keyof typeof WORKSPACE_AUDIT_WORDS, true> {}
}
