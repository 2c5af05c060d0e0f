import type { Command } from 'commander';
import { print, table } from '../cli-kit/output.js';
import { withDatabase } from '../cli-kit/with-database.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { normalizeEmail } from './admin-rows.js';
import { listAdmins, removeAdmin } from './admins.js';
import { issueBreakGlassLink } from './break-glass.js';
import { createAdminLink, signInUrl, ssoSignInUrl } from './sign-in-links.js';

export function adminCommands(program: Command): void {
  const admin = program.command('admin').description('console admins: one-time sign-in links, list, remove');
  admin
    .command('create')
    .description(
      'add a console admin (or, for an existing one, issue a new link: forgotten password); prints a one-time sign-in link valid 24 hours',
    )
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--email <address>', "the admin's email address")
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; email: string; json?: boolean }) => {
      normalizeEmail(opts.email); // refuse a malformed address before opening the database
      const { link, url } = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        const created = await createAdminLink(s.database, {
          workspaceId: opts.workspace,
          email: opts.email,
          actor: 'cli',
          now: s.clock(),
        });
        // Single sign-on only: the link would open nothing; the admin signs in through the provider.
        const url = created.ssoOnly ? ssoSignInUrl(s.config.baseUrl, opts.workspace) : signInUrl(s.config.baseUrl, created.token);
        return { link: created, url };
      });
      const out = {
        sign_in_url: url,
        admin_id: link.admin.id,
        email: link.admin.email,
        expires_at: link.ssoOnly ? null : link.expiresAt,
        created: link.created,
        sso_only: link.ssoOnly,
      };
      if (link.ssoOnly) {
        print(!!opts.json, out, () =>
          [
            link.created ? `Admin ${link.admin.email} added (${link.admin.id}).` : `${link.admin.email} is an admin (${link.admin.id}).`,
            '',
            'Password sign-in is off for this workspace: no sign-in link is issued. They sign in with single sign-on at:',
            `  ${url}`,
            '',
            'If the sign-in provider cannot be used, wsops admin break-glass issues a one-time emergency link.',
          ].join('\n'),
        );
        return;
      }
      print(!!opts.json, out, () =>
        [
          link.created
            ? `Admin ${link.admin.email} added (${link.admin.id}).`
            : `New sign-in link for ${link.admin.email} (${link.admin.id}).`,
          '',
          `One-time sign-in link (valid until ${link.expiresAt}, usable once):`,
          `  ${url}`,
          '',
          'Pass it on privately; following it, the admin chooses a password and is signed in.',
        ].join('\n'),
      );
    });
  admin
    .command('break-glass')
    .description(
      'emergency sign-in when single sign-on cannot be used: prints a one-time link (valid 1 hour) that signs an existing admin in once without SSO or a password, even while password sign-in is off; sets no password; issuing and using it are audited with the reason',
    )
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--email <address>', 'the existing admin to let in')
    .requiredOption('--reason <text>', 'why single sign-on cannot be used (kept in the audit trail)')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; email: string; reason: string; json?: boolean }) => {
      normalizeEmail(opts.email);
      const { link, url } = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        const issued = await issueBreakGlassLink(s.database.db, {
          workspaceId: opts.workspace,
          email: opts.email,
          reason: opts.reason,
          actor: 'cli',
          now: s.clock(),
        });
        return { link: issued, url: signInUrl(s.config.baseUrl, issued.token) };
      });
      print(
        !!opts.json,
        { sign_in_url: url, admin_id: link.adminId, email: link.email, expires_at: link.expiresAt, break_glass: true },
        () =>
          [
            `Break-glass link for ${link.email} (${link.adminId}), recorded in the audit trail:`,
            `  ${url}`,
            '',
            `It signs them in once, without single sign-on or a password, until ${link.expiresAt}. Pass it on privately.`,
          ].join('\n'),
      );
    });
  admin
    .command('list')
    .description('list the console admins of a workspace')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const admins = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        return listAdmins(s.database.db, opts.workspace);
      });
      print(!!opts.json, admins, () => table(admins, ['id', 'email', 'created_at', 'created_by', 'last_sign_in_at', 'password_set']));
    });
  admin
    .command('remove')
    .description('remove a console admin: their sessions end at once; keys and endpoints they created keep working')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<admin>', 'admin id (adm_...) or email address')
    .option('--json', 'machine output')
    .action(async (ref: string, opts: { workspace: string; json?: boolean }) => {
      const removed = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        return removeAdmin(s.database, {
          workspaceId: opts.workspace,
          admin: ref,
          actor: 'cli',
          now: s.clock(),
        });
      });
      print(!!opts.json, removed, () => `removed ${removed.email} (${removed.id})`);
    });
}
