import type { Command } from 'commander';
import { print, UsageError } from '../cli-kit/output.js';
import { withDatabase } from '../cli-kit/with-database.js';
import { listAdmins } from '../sign-in/admins.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { addAlertRecipient, listAlertRecipients, removeAlertRecipient } from './recipients.js';
import { sendTestAlert } from './test-alert.js';

export function alertCommands(program: Command): void {
  const alerts = program.command('alerts').description('webhook failure alerts: who they go to, and a test mail');
  alerts
    .command('recipients')
    .description(
      "show who a workspace's failure alerts are mailed to (its console admins and the added addresses); --add or --remove an address (a team mailbox)",
    )
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--add <email>', 'also mail the alerts to this address')
    .option('--remove <email>', 'stop mailing this added address')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; add?: string; remove?: string; json?: boolean }) => {
      if (opts.add !== undefined && opts.remove !== undefined) throw new UsageError('give --add or --remove, not both');
      const out = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        const input = { workspaceId: opts.workspace, actor: 'cli', now: s.clock() };
        const added =
          opts.add !== undefined
            ? await addAlertRecipient(s.database.db, { ...input, email: opts.add })
            : opts.remove !== undefined
              ? await removeAlertRecipient(s.database.db, { ...input, email: opts.remove })
              : await listAlertRecipients(s.database.db, opts.workspace);
        const admins = (await listAdmins(s.database.db, opts.workspace)).map((a) => a.email);
        return { admins, recipients: added };
      });
      print(!!opts.json, out, () =>
        [
          `Console admins (mailed as admins): ${out.admins.join(', ') || 'none'}`,
          `Added recipients: ${out.recipients.join(', ') || 'none'}`,
        ].join('\n'),
      );
    });
  alerts
    .command('test')
    .description("send a test alert now through WSOPS_SMTP_URL to the workspace's alert recipients, and print the mail server's answer")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const result = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        return sendTestAlert(s, opts.workspace, 'cli');
      });
      // Not sent is a failure of the command: a script that checks the mail path sees it.
      if (!result.sent) process.exitCode = 1;
      print(!!opts.json, result, () =>
        [
          result.sent ? `Test alert sent to ${result.accepted.join(', ')}.` : 'Test alert NOT sent.',
          ...(result.rejected.length ? [`Refused by the server: ${result.rejected.join(', ')}`] : []),
          `Mail server's answer: ${result.server_response}`,
        ].join('\n'),
      );
    });
}
