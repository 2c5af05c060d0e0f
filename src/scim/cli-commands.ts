import type { Command } from 'commander';
import { print, table, UsageError } from '../cli-kit/output.js';
import { withDatabase } from '../cli-kit/with-database.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { createScimToken, listScimTokens, revokeScimToken } from './tokens.js';

export function scimCommands(program: Command): void {
  const scim = program
    .command('scim')
    .description('SCIM provisioning: the tokens identity providers (Okta, Entra ID) provision people with');
  const token = scim.command('token').description('create, list and revoke workspace SCIM tokens');
  token
    .command('create')
    .description('create a SCIM token; it is printed once and cannot be shown again')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--location <id>', 'the location (loc_...) people created through this token are placed at')
    .option('--env <env>', 'live or test (default: the deployment WSOPS_ENV)')
    .option('--name <text>', 'a label shown beside the token, e.g. the identity provider', 'SCIM token')
    .option('--days <n>', 'days the token works, 1 to 365 (default: until revoked)')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; location: string; env?: string; name: string; days?: string; json?: boolean }) => {
      if (opts.env !== undefined && opts.env !== 'live' && opts.env !== 'test')
        throw new UsageError(`--env must be live or test; got "${opts.env}"`);
      if (opts.days !== undefined && !/^\d{1,4}$/.test(opts.days))
        throw new UsageError(`--days must be a whole number of days from 1 to 365; got "${opts.days.slice(0, 40)}"`);
      const { created, baseUrl } = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        const made = await createScimToken(s.database, {
          workspaceId: opts.workspace,
          environment: (opts.env as 'live' | 'test' | undefined) ?? s.config.env,
          locationId: opts.location,
          name: opts.name,
          days: opts.days === undefined ? undefined : Number(opts.days),
          createdBy: 'cli',
          now: s.clock(),
        });
        return { created: made, baseUrl: s.config.baseUrl };
      });
      print(!!opts.json, { ...created, scim_base_url: `${baseUrl}/scim/v2` }, () =>
        [
          `token_id:      ${created.token_id}`,
          `token:         ${created.token}`,
          `scim_base_url: ${baseUrl}/scim/v2`,
          `location_id:   ${created.location_id}`,
          `expires_at:    ${created.expires_at ?? 'never (until revoked)'}`,
          '',
          'The token is shown only now; paste it into the identity provider as its bearer token.',
        ].join('\n'),
      );
    });
  token
    .command('list')
    .description('list the SCIM tokens of a workspace (never their secrets)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const tokens = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        return listScimTokens(s.database.db, opts.workspace, s.clock());
      });
      print(!!opts.json, tokens, () =>
        table(tokens, ['token_id', 'name', 'environment', 'status', 'location_id', 'created_at', 'expires_at', 'last_used_at']),
      );
    });
  token
    .command('revoke')
    .description('revoke a SCIM token: requests with it get 401 from the next request on')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<token_id>', 'the public token id')
    .option('--json', 'machine output')
    .action(async (tokenId: string, opts: { workspace: string; json?: boolean }) => {
      const revoked = await withDatabase((s) => revokeScimToken(s.database.db, opts.workspace, tokenId, s.clock(), 'cli'));
      print(!!opts.json, revoked, () => `revoked ${revoked.token_id} at ${revoked.revoked_at}`);
    });
}
