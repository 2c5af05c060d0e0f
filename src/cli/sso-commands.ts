import type { Command } from 'commander';
import { print, UsageError } from '../cli-kit/output.js';
import type { Config } from '../config.js';
import { checkSsoInput, clearSso, type SignInRules, setSso, signInRules } from '../sign-in/sign-in-rules.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { withServices } from './context.js';
import { secretArgument } from './secret-input.js';

/** What `sso show` and `sso set` print: never the client secret. */
function describe(services: { config: Pick<Config, 'baseUrl'> }, workspaceId: string, rules: SignInRules) {
  const base = services.config.baseUrl.replace(/\/+$/, '');
  return {
    workspace_id: workspaceId,
    sso: rules.sso
      ? {
          issuer: rules.sso.issuer,
          client_id: rules.sso.clientId,
          domain: rules.sso.domain,
          create_admins: rules.sso.createAdmins,
          trust_missing_email_verified: rules.sso.trustMissingEmailVerified,
          sign_in_url: `${base}/console/sso/${workspaceId}`,
          redirect_uri: `${base}/console/sso/callback`,
        }
      : null,
    password_sign_in: rules.passwordSignIn,
    require_second_factor: rules.requireSecondFactor,
  };
}

function human(d: ReturnType<typeof describe>): string {
  if (!d.sso) return `Single sign-on: off for ${d.workspace_id}. Password sign-in: on.`;
  return [
    `Single sign-on for ${d.workspace_id}: OpenID Connect`,
    `  issuer:            ${d.sso.issuer}`,
    `  client id:         ${d.sso.client_id}`,
    `  email domain:      ${d.sso.domain}`,
    `  new admins:        ${d.sso.create_admins ? 'created at their first SSO sign-in' : 'must be invited first'}`,
    `  email_verified:    ${d.sso.trust_missing_email_verified ? 'true required; an answer without the claim is trusted' : 'true required'}`,
    `  password sign-in:  ${d.password_sign_in ? 'on' : 'off'}`,
    `  sign-in link:      ${d.sso.sign_in_url}`,
    `  redirect URI:      ${d.sso.redirect_uri}  (register it at the provider)`,
  ].join('\n');
}

function onOff(name: string, raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new UsageError(`${name} must be on or off, not "${raw}"`);
}

export function ssoCommands(program: Command): void {
  const sso = program.command('sso').description("a workspace's console single sign-on (OpenID Connect): set, show, remove");
  sso
    .command('set')
    .description('set up OpenID Connect sign-in for a workspace (authorization code with PKCE)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--issuer <url>', "the provider's issuer URL (its /.well-known/openid-configuration is read)")
    .requiredOption('--client-id <id>', 'the client id registered at the provider')
    .requiredOption(
      '--client-secret <secret>',
      'the client secret (stored encrypted); - reads it from standard input, out of ps and the shell history',
    )
    .requiredOption('--domain <domain>', 'the one email domain allowed to sign in, e.g. example.com')
    .option('--create-admins', 'create an admin at the first SSO sign-in of an address in the domain')
    .option(
      '--trust-missing-email-verified',
      'also accept an address when the provider sends no email_verified claim at all (only for a provider that never sends it; false is always refused)',
    )
    .option('--password-sign-in <on|off>', 'switch password sign-in for this workspace off (SSO only) or on')
    .option('--json', 'machine output')
    .action(
      async (opts: {
        workspace: string;
        issuer: string;
        clientId: string;
        clientSecret: string;
        domain: string;
        createAdmins?: boolean;
        trustMissingEmailVerified?: boolean;
        passwordSignIn?: string;
        json?: boolean;
      }) => {
        const passwordSignIn = onOff('--password-sign-in', opts.passwordSignIn);
        const clientSecret = await secretArgument('--client-secret', opts.clientSecret);
        checkSsoInput(opts.issuer, opts.domain, opts.clientId, clientSecret); // refused before opening the database
        const out = await withServices(async (s) => {
          await getWorkspace(s.database.db, opts.workspace);
          await setSso(s.database.db, {
            workspaceId: opts.workspace,
            issuer: opts.issuer,
            clientId: opts.clientId,
            clientSecret,
            domain: opts.domain,
            createAdmins: !!opts.createAdmins,
            trustMissingEmailVerified: !!opts.trustMissingEmailVerified,
            passwordSignIn,
            actor: 'cli',
            now: s.clock(),
            box: s.secretBox,
          });
          return describe(s, opts.workspace, await signInRules(s.database.db, opts.workspace));
        });
        print(!!opts.json, out, () => human(out));
      },
    );
  sso
    .command('show')
    .description("show a workspace's single sign-on and sign-in rules (never the client secret)")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const out = await withServices(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        return describe(s, opts.workspace, await signInRules(s.database.db, opts.workspace));
      });
      print(!!opts.json, out, () => human(out));
    });
  sso
    .command('remove')
    .description('remove single sign-on from a workspace (password sign-in is switched back on)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const out = await withServices(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        await clearSso(s.database.db, { workspaceId: opts.workspace, actor: 'cli', now: s.clock() });
        return describe(s, opts.workspace, await signInRules(s.database.db, opts.workspace));
      });
      print(!!opts.json, out, () => human(out));
    });
}
