/**
 * A workspace's console sign-in rules: whether every admin needs a second factor, whether
 * password sign-in is on, and its OpenID Connect single sign-on. No row means the defaults
 * (password sign-in on, no second factor required, no SSO).
 */
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import type { DB, WorkspaceSignInTable } from '../store/schema.js';
import type { SealBox } from './second-factor.js';

export interface SsoSettings {
  issuer: string;
  clientId: string;
  /** Sealed with the secret box; opened only to call the provider. */
  clientSecretSealed: string;
  domain: string;
  createAdmins: boolean;
  /**
   * Off (the default): only an answer whose email_verified claim is true signs in. On: an
   * answer without the claim at all is trusted too, for a provider that never sends it (one
   * that says false, or anything but true, is still refused).
   */
  trustMissingEmailVerified: boolean;
}

export interface SignInRules {
  requireSecondFactor: boolean;
  passwordSignIn: boolean;
  sso: SsoSettings | null;
}

export const DEFAULT_RULES: SignInRules = { requireSecondFactor: false, passwordSignIn: true, sso: null };

function toRules(row: WorkspaceSignInTable | undefined): SignInRules {
  if (!row) return DEFAULT_RULES;
  const sso =
    row.sso_issuer && row.sso_client_id && row.sso_client_secret_ciphertext && row.sso_domain
      ? {
          issuer: row.sso_issuer,
          clientId: row.sso_client_id,
          clientSecretSealed: row.sso_client_secret_ciphertext,
          domain: row.sso_domain,
          createAdmins: row.sso_create_admins === 1,
          trustMissingEmailVerified: row.sso_trust_missing_email_verified === 1,
        }
      : null;
  return { requireSecondFactor: row.require_second_factor === 1, passwordSignIn: row.password_sign_in === 1, sso };
}

export async function signInRules(db: Kysely<DB>, workspaceId: string): Promise<SignInRules> {
  const row = await db.selectFrom('workspace_sign_in').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
  return toRules(row);
}

/**
 * The sign-in settings of a workspace without single sign-on: password sign-in on, every SSO
 * column empty. The defaults of a new row, and what removing SSO writes back.
 */
const NO_SSO = {
  password_sign_in: 1,
  sso_issuer: null,
  sso_client_id: null,
  sso_client_secret_ciphertext: null,
  sso_domain: null,
  sso_create_admins: 0,
  sso_trust_missing_email_verified: 0,
} as const satisfies Partial<WorkspaceSignInTable>;

/** The row as it would be with `change` applied (absent row: the defaults). */
async function upsert(
  db: Kysely<DB>,
  workspaceId: string,
  change: Partial<Omit<WorkspaceSignInTable, 'workspace_id' | 'updated_at'>>,
  nowIso: string,
): Promise<void> {
  const current = await db.selectFrom('workspace_sign_in').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
  const row: WorkspaceSignInTable = {
    workspace_id: workspaceId,
    require_second_factor: 0,
    ...NO_SSO,
    ...current,
    ...change,
    updated_at: nowIso,
  };
  if (row.password_sign_in === 0 && !row.sso_issuer) {
    throw new AppError(
      'invalid_state',
      'password sign-in cannot be switched off while single sign-on is not set up: nobody could sign in. Set up SSO first (wsops sso set)',
    );
  }
  await db
    .insertInto('workspace_sign_in')
    .values(row)
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ ...row }))
    .execute();
}

export async function setRequireSecondFactor(
  db: Kysely<DB>,
  input: { workspaceId: string; required: boolean; actor: string; now: number },
): Promise<void> {
  const nowIso = new Date(input.now).toISOString();
  await db.transaction().execute(async (trx) => {
    await upsert(trx, input.workspaceId, { require_second_factor: input.required ? 1 : 0 }, nowIso);
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.actor,
      action: input.required ? 'workspace.second_factor_required' : 'workspace.second_factor_optional',
      detail: {},
    });
  });
}

export interface SsoInput {
  workspaceId: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  domain: string;
  createAdmins: boolean;
  /** Trust an answer without an email_verified claim (SsoSettings); absent: off. */
  trustMissingEmailVerified?: boolean;
  /** undefined: unchanged. */
  passwordSignIn?: boolean;
  actor: string;
  now: number;
  box: SealBox;
  /** How refusals name the fields (the CLI's flags unless told). */
  labels?: SsoLabels;
}

/** How a refusal names each field: the CLI's flags, or the console's labels. */
export interface SsoLabels {
  issuer: string;
  domain: string;
  clientId: string;
  clientSecret: string;
}

export const CLI_SSO_LABELS: SsoLabels = {
  issuer: '--issuer',
  domain: '--domain',
  clientId: '--client-id',
  clientSecret: '--client-secret',
};

/**
 * Checks an issuer URL and an email domain; refuses either with what to type instead (an
 * AppError whose `param` is issuer, domain, client_id or client_secret).
 */
export function checkSsoInput(
  issuer: string,
  domain: string,
  clientId: string,
  clientSecret: string,
  labels: SsoLabels = CLI_SSO_LABELS,
): { issuer: string; domain: string } {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new AppError('invalid_parameter', `${labels.issuer} "${issuer}" is not a URL (expected e.g. https://login.example.com)`, {
      param: 'issuer',
    });
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname))) {
    throw new AppError('invalid_parameter', `${labels.issuer} must be an https URL (plain http only on this machine): ${issuer}`, {
      param: 'issuer',
    });
  }
  const d = domain.trim().toLowerCase().replace(/^@/, '');
  if (!/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(d)) {
    throw new AppError('invalid_parameter', `${labels.domain} "${domain}" is not an email domain (expected e.g. example.com)`, {
      param: 'domain',
    });
  }
  if (!clientId.trim()) throw new AppError('invalid_parameter', `${labels.clientId} is required`, { param: 'client_id' });
  if (!clientSecret) throw new AppError('invalid_parameter', `${labels.clientSecret} is required`, { param: 'client_secret' });
  return { issuer: url.href.replace(/\/$/, ''), domain: d };
}

export async function setSso(db: Kysely<DB>, input: SsoInput): Promise<void> {
  const checked = checkSsoInput(input.issuer, input.domain, input.clientId, input.clientSecret, input.labels);
  const nowIso = new Date(input.now).toISOString();
  await db.transaction().execute(async (trx) => {
    await upsert(
      trx,
      input.workspaceId,
      {
        sso_issuer: checked.issuer,
        sso_client_id: input.clientId.trim(),
        sso_client_secret_ciphertext: input.box.seal(input.clientSecret),
        sso_domain: checked.domain,
        sso_create_admins: input.createAdmins ? 1 : 0,
        sso_trust_missing_email_verified: input.trustMissingEmailVerified ? 1 : 0,
        ...(input.passwordSignIn === undefined ? {} : { password_sign_in: input.passwordSignIn ? 1 : 0 }),
      },
      nowIso,
    );
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.actor,
      action: 'workspace.sso_set',
      detail: {
        issuer: checked.issuer,
        domain: checked.domain,
        create_admins: input.createAdmins,
        trust_missing_email_verified: !!input.trustMissingEmailVerified,
        password_sign_in: input.passwordSignIn,
      },
    });
  });
}

/** Removes single sign-on; password sign-in is switched back on (else nobody could sign in). */
export async function clearSso(db: Kysely<DB>, input: { workspaceId: string; actor: string; now: number }): Promise<void> {
  const nowIso = new Date(input.now).toISOString();
  await db.transaction().execute(async (trx) => {
    await upsert(trx, input.workspaceId, NO_SSO, nowIso);
    await recordAudit(trx, { workspaceId: input.workspaceId, at: nowIso, actor: input.actor, action: 'workspace.sso_removed', detail: {} });
  });
}
