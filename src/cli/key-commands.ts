import type { Command } from 'commander';
import { READ_SCOPES, WRITE_SCOPES } from '../registers/define.js';
import { createKey, listKeys, parseScopes, revokeKey } from '../store/keys.js';
import { getWorkspace } from '../store/workspaces.js';
import { withServices } from './context.js';
import { parsePositiveInt, print, table, UsageError } from './output.js';

export function keyCommands(program: Command): void {
  const key = program.command('key').description('create, list and revoke API keys');
  key
    .command('create')
    .description('create an API key; its secret is printed once and cannot be shown again')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--scopes <list>', 'comma-separated scopes, e.g. assets:read,people:read')
    .option('--env <env>', 'live or test (default: the deployment WSOPS_ENV)')
    .option('--days <n>', 'life in days, 1 to 365', '90')
    .option('--name <text>', 'a label shown beside the key', 'API key')
    .option('--json', 'machine output')
    .addHelpText(
      'after',
      `
Scopes (--scopes takes any of them, comma-separated):
  read, one per module:  ${READ_SCOPES.join(', ')}
  write:                 ${WRITE_SCOPES.join(', ')}`,
    )
    .action(async (opts: { workspace: string; scopes: string; env?: string; days: string; name: string; json?: boolean }) => {
      if (opts.env !== undefined && opts.env !== 'live' && opts.env !== 'test') {
        throw new UsageError(`--env must be live or test; got "${opts.env}"`);
      }
      const days = parsePositiveInt('--days', opts.days, 365);
      const scopes = parseScopes(opts.scopes);
      const created = await withServices(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        return createKey(s.database.db, {
          workspaceId: opts.workspace,
          scopes,
          environment: (opts.env as 'live' | 'test' | undefined) ?? s.config.env,
          days,
          name: opts.name,
          createdBy: 'cli',
          now: s.clock(),
          maxKeys: s.config.maxKeys,
          dialect: s.database.dialect,
        });
      });
      print(!!opts.json, created, () =>
        [
          `key_id:     ${created.key_id}`,
          `key:        ${created.key}`,
          `scopes:     ${created.scopes.join(', ')}`,
          `expires_at: ${created.expires_at}`,
          '',
          'The key is shown only now; store it on a server.',
        ].join('\n'),
      );
    });
  key
    .command('list')
    .description('list the keys of a workspace (never their secrets)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const keys = await withServices(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        return listKeys(s.database.db, opts.workspace, s.clock());
      });
      print(!!opts.json, keys, () => table(keys, ['key_id', 'name', 'environment', 'status', 'scopes', 'expires_at', 'last_used_at']));
    });
  key
    .command('revoke')
    .description('revoke a key: requests with it get 401 from the next request on')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<key_id>', 'the public key id')
    .option('--json', 'machine output')
    .action(async (keyId: string, opts: { workspace: string; json?: boolean }) => {
      const revoked = await withServices((s) => revokeKey(s.database.db, opts.workspace, keyId, s.clock()));
      print(!!opts.json, revoked, () => `revoked ${revoked.key_id} at ${revoked.revoked_at}`);
    });
}
