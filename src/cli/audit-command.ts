import type { Command } from 'commander';
import { ACTOR_KINDS, AUDIT_KINDS, AUDIT_MAX_LIMIT, auditPage, describeActor } from '../audit/audit.js';
import { describeAudit } from '../audit-words.js';
import { parsePositiveInt, print, table, UsageError } from '../cli-kit/output.js';
import { withDatabase } from '../cli-kit/with-database.js';
import { getWorkspace } from '../workspaces/workspaces.js';

export function auditCommand(program: Command): void {
  program
    .command('audit')
    .description('show the audit trail of a workspace, newest first: who did what and when')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--kind <kind>', `only entries of this kind: ${Object.keys(AUDIT_KINDS).join(', ')}`)
    .option('--actor <actor>', `only entries by ${Object.keys(ACTOR_KINDS).join(', ')}, or an exact actor such as console:ann@example.com`)
    .option('--limit <n>', `entries per page, 1 to ${AUDIT_MAX_LIMIT}`, '50')
    .option('--before <seq>', 'only entries older than this seq (the next_before of the previous page)')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; kind?: string; actor?: string; limit: string; before?: string; json?: boolean }) => {
      const limit = parsePositiveInt('--limit', opts.limit, AUDIT_MAX_LIMIT);
      const before = opts.before !== undefined ? parsePositiveInt('--before', opts.before, Number.MAX_SAFE_INTEGER) : undefined;
      if (opts.kind !== undefined && !Object.hasOwn(AUDIT_KINDS, opts.kind)) {
        throw new UsageError(`--kind must be one of ${Object.keys(AUDIT_KINDS).join(', ')}; got "${opts.kind}"`);
      }
      const page = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        return auditPage(s.database.db, opts.workspace, { kind: opts.kind, actor: opts.actor, limit, before });
      });
      print(!!opts.json, { entries: page.entries, next_before: page.nextBefore }, () => {
        const rows = page.entries.map((e) => ({ seq: e.seq, at: e.at, who: describeActor(e.actor), what: describeAudit(e) }));
        const more = page.nextBefore !== null ? `\nolder entries: --before ${page.nextBefore}` : '';
        return `${table(rows, ['seq', 'at', 'who', 'what'])}${more}`;
      });
    });
}
