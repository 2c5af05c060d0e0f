import type { Command } from 'commander';
import { parsePositiveInt, print, table, UsageError } from '../cli-kit/output.js';
import { withDatabase } from '../cli-kit/with-database.js';
import { READ_SCOPES, WRITE_SCOPES } from '../registers/define.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { setAllowedIps } from './key-allowlists.js';
import type { KeySummary } from './key-summary.js';
import { ROLL_GRACES, UNUSED_DAYS } from './key-terms.js';
import { createKey, listKeys, parseScopes, revokeKey, rollKey } from './keys.js';

const DAY_MS = 86_400_000;

/** `--allow-ip` may be given several times; each value may also hold a comma-separated list. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `--expiring 14d`: a whole number of days. */
function parseDays(raw: string): number {
  const m = /^(\d{1,3})d$/.exec(raw.trim());
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 365)
    throw new UsageError(`--expiring takes a number of days from 1d to 365d, e.g. 14d; got "${raw}"`);
  return Number(m[1]);
}

/** What a human reader should notice about a key, in words (the JSON has the same as fields). */
function marks(k: KeySummary, now: number): string {
  const out: string[] = [];
  if (k.status === 'valid' && k.revoked_at) out.push(`revoked at ${k.revoked_at} (rolled)`);
  if (k.expiring_soon) out.push(`expires in ${Math.max(0, Math.ceil((Date.parse(k.expires_at) - now) / DAY_MS))}d`);
  if (k.unused) out.push(k.last_used_at === null ? 'never used' : `unused ${UNUSED_DAYS}d+`);
  if (k.allowed_ips) out.push(`only from ${k.allowed_ips.join(',')}`);
  return out.join('; ');
}

function printNewKey(
  json: boolean,
  created: KeySummary & { key: string },
  extra: { fields: Record<string, unknown>; lines: string[] } = { fields: {}, lines: [] },
): void {
  print(json, { ...created, ...extra.fields }, () =>
    [
      `key_id:     ${created.key_id}`,
      `key:        ${created.key}`,
      `scopes:     ${created.scopes.join(', ')}`,
      `expires_at: ${created.expires_at}`,
      ...(created.allowed_ips ? [`allowed_ips: ${created.allowed_ips.join(', ')}`] : []),
      ...extra.lines,
      '',
      'The key is shown only now; store it on a server.',
    ].join('\n'),
  );
}

export function keyCommands(program: Command): void {
  const key = program.command('key').description('create, list, roll and revoke API keys');
  key
    .command('create')
    .description('create an API key; its secret is printed once and cannot be shown again')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--scopes <list>', 'comma-separated scopes, e.g. assets:read,people:read')
    .option('--env <env>', 'live or test (default: the deployment WSOPS_ENV)')
    .option('--days <n>', 'life in days, 1 to 365', '90')
    .option('--name <text>', 'a label shown beside the key', 'API key')
    .option('--allow-ip <cidr>', 'only accept the key from this range (IPv4 or IPv6 CIDR); repeatable', collect)
    .option('--json', 'machine output')
    .addHelpText(
      'after',
      `
Scopes (--scopes takes any of them, comma-separated):
  read, one per module:  ${READ_SCOPES.join(', ')}
  write:                 ${WRITE_SCOPES.join(', ')}`,
    )
    .action(
      async (opts: { workspace: string; scopes: string; env?: string; days: string; name: string; allowIp?: string[]; json?: boolean }) => {
        if (opts.env !== undefined && opts.env !== 'live' && opts.env !== 'test') {
          throw new UsageError(`--env must be live or test; got "${opts.env}"`);
        }
        const days = parsePositiveInt('--days', opts.days, 365);
        const scopes = parseScopes(opts.scopes);
        const created = await withDatabase(async (s) => {
          await getWorkspace(s.database.db, opts.workspace);
          return createKey(s.database, {
            workspaceId: opts.workspace,
            scopes,
            environment: (opts.env as 'live' | 'test' | undefined) ?? s.config.env,
            days,
            name: opts.name,
            createdBy: 'cli',
            allowedIps: opts.allowIp,
            now: s.clock(),
            maxKeys: s.config.maxKeys,
          });
        });
        printNewKey(!!opts.json, created);
      },
    );
  key
    .command('list')
    .description('list the keys of a workspace (never their secrets), with last use and what needs attention')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--expiring <days>', 'only valid keys expiring within this many days, e.g. 14d')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; expiring?: string; json?: boolean }) => {
      const within = opts.expiring === undefined ? undefined : parseDays(opts.expiring);
      const { keys, now } = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        const now = s.clock();
        return { keys: await listKeys(s.database.db, opts.workspace, now), now };
      });
      const shown =
        within === undefined ? keys : keys.filter((k) => k.status === 'valid' && Date.parse(k.expires_at) - now <= within * DAY_MS);
      print(!!opts.json, shown, () =>
        table(
          shown.map((k) => ({ ...k, notes: marks(k, now) })),
          ['key_id', 'name', 'environment', 'status', 'scopes', 'expires_at', 'last_used_at', 'last_used_ip', 'notes'],
        ),
      );
    });
  key
    .command('roll')
    .description('create a successor (same name, scopes, allowlist and life) and revoke this key after a grace; both work meanwhile')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<key_id>', 'the public key id of the key to replace')
    .option('--grace <time>', `how long the old key keeps working: ${Object.keys(ROLL_GRACES).join(', ')}`, '24h')
    .option('--json', 'machine output')
    .action(async (keyId: string, opts: { workspace: string; grace: string; json?: boolean }) => {
      const { successor, rolled } = await withDatabase(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        return rollKey(s.database, {
          workspaceId: opts.workspace,
          keyId,
          grace: opts.grace,
          actor: 'cli',
          now: s.clock(),
          maxKeys: s.config.maxKeys,
        });
      });
      printNewKey(!!opts.json, successor, {
        fields: { rolled_from: rolled.key_id, rolled_from_revoked_at: rolled.revoked_at },
        lines: [`replaces:   ${rolled.key_id}, which is revoked at ${rolled.revoked_at}`],
      });
    });
  key
    .command('allow-ip')
    .description("replace a key's IP allowlist (effective on the next request); --any removes it")
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<key_id>', 'the public key id')
    .option('--allow-ip <cidr>', 'an allowed range (IPv4 or IPv6 CIDR); repeatable', collect)
    .option('--any', 'accept the key from any address (remove the allowlist)')
    .option('--json', 'machine output')
    .action(async (keyId: string, opts: { workspace: string; allowIp?: string[]; any?: boolean; json?: boolean }) => {
      if (!!opts.any === (opts.allowIp !== undefined)) throw new UsageError('give either --allow-ip CIDR (repeatable) or --any');
      const updated = await withDatabase((s) =>
        setAllowedIps(s.database.db, { workspaceId: opts.workspace, keyId, allowedIps: opts.allowIp ?? [], actor: 'cli', now: s.clock() }),
      );
      print(!!opts.json, updated, () =>
        updated.allowed_ips
          ? `${updated.key_id} is accepted only from ${updated.allowed_ips.join(', ')}`
          : `${updated.key_id} is accepted from any address`,
      );
    });
  key
    .command('revoke')
    .description('revoke a key: requests with it get 401 from the next request on')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<key_id>', 'the public key id')
    .option('--json', 'machine output')
    .action(async (keyId: string, opts: { workspace: string; json?: boolean }) => {
      const revoked = await withDatabase((s) => revokeKey(s.database.db, opts.workspace, keyId, s.clock()));
      print(!!opts.json, revoked, () => `revoked ${revoked.key_id} at ${revoked.revoked_at}`);
    });
}
