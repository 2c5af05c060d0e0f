/**
 * The audit trail's words: every feature's, in one catalogue, for the console's audit page and
 * `wsops audit`. A feature adds its file here and nowhere else.
 */
import { ACTION_AUDIT_WORDS } from './actions/audit-words.js';
import { ALERT_AUDIT_WORDS } from './alerts/audit-words.js';
import type { AuditAction, AuditRow, AuditWords } from './audit/audit.js';
import { KEY_AUDIT_WORDS } from './keys/audit-words.js';
import { SCIM_AUDIT_WORDS } from './scim/audit-words.js';
import { SIGN_IN_AUDIT_WORDS } from './sign-in/audit-words.js';
import { ENDPOINT_AUDIT_WORDS } from './webhooks/endpoints/audit-words.js';
import { DELIVERY_AUDIT_WORDS } from './webhooks/queue/audit-words.js';
import { WORKSPACE_AUDIT_WORDS } from './workspaces/audit-words.js';
import { WRITE_AUDIT_WORDS } from './writes/audit-words.js';

const WORDS = {
  ...KEY_AUDIT_WORDS,
  ...ENDPOINT_AUDIT_WORDS,
  ...DELIVERY_AUDIT_WORDS,
  ...ALERT_AUDIT_WORDS,
  ...SCIM_AUDIT_WORDS,
  ...WORKSPACE_AUDIT_WORDS,
  ...SIGN_IN_AUDIT_WORDS,
  ...WRITE_AUDIT_WORDS,
  ...ACTION_AUDIT_WORDS,
} satisfies Record<Exclude<AuditAction, `action.${string}`>, unknown>;

/** Every action's words; `action.*` words the domain actions. */
export const AUDIT_WORDS: AuditWords = WORDS;

/**
 * What an entry did, in plain text (the caller escapes it): its action's words, else its family's
 * (`action.*` words every `action.…`); an action with none reads as itself.
 */
export function describeAudit(e: Pick<AuditRow, 'action' | 'target' | 'key_id' | 'detail'>): string {
  const target = e.target ?? e.key_id ?? '';
  const family = `${e.action.slice(0, e.action.indexOf('.') + 1)}*`;
  const say = Object.hasOwn(AUDIT_WORDS, e.action)
    ? AUDIT_WORDS[e.action]
    : Object.hasOwn(AUDIT_WORDS, family)
      ? AUDIT_WORDS[family]
      : undefined;
  if (say) return say({ action: e.action, target, detail: e.detail });
  return `${e.action}${target ? ` ${target}` : ''}`;
}
