import type { Command } from 'commander';
import { createAdminLink, listAdmins, normalizeEmail, removeAdmin, signInUrl } from '../store/admins.js';
import { getWorkspace } from '../store/workspaces.js';
import { withDatabase } from './context.js';
import { print, table } from './output.js';

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
        const created = await createAdminLink(s.database.db, {
          workspaceId: opts.workspace,
          email: opts.email,
          actor: 'cli',
          now: s.clock(),
          dialect: s.database.dialect,
        });
        return { link: created, url: signInUrl(s.config.baseUrl, created.token) };
      });
      print(
        !!opts.json,
        { sign_in_url: url, admin_id: link.admin.id, email: link.admin.email, expires_at: link.expiresAt, created: link.created },
        () =>
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
        return removeAdmin(s.database.db, {
          workspaceId: opts.workspace,
          admin: ref,
          actor: 'cli',
          now: s.clock(),
          dialect: s.database.dialect,
        });
      });
      print(!!opts.json, removed, () => `removed ${removed.email} (${removed.id})`);
    });
}
