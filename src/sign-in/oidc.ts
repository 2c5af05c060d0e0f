/**
 * OpenID Connect single sign-on for the console (authorization code flow with PKCE, by
 * `openid-client`). Each workspace has its own issuer, client and allowed email domain
 * (sign-in-rules.ts). This module speaks to the provider; pages/sso.ts holds the routes.
 *
 * Everything the callback needs to check (state, nonce, PKCE verifier, the workspace, where
 * to return) travels in a short-lived cookie sealed with the secret box, so no server-side
 * storage is needed and another browser's callback cannot be replayed into this one.
 */
import type * as oidc from 'openid-client';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { SecretBox } from '../secret-box.js';
import type { SsoSettings } from './sign-in-rules.js';

/** The library, loaded at the first single sign-on rather than at every start (ADR 37). */
const openidClient = () => import('openid-client');

/** What this file takes of the services built at start (services.ts). */
export interface OidcServices {
  config: Config;
  secretBox: SecretBox;
  clock: Clock;
}

export const SSO_COOKIE = 'wsops_sso';
/** A sign-in at the provider must finish within this time. */
export const SSO_FLOW_MS = 10 * 60_000;
export const SSO_CALLBACK_PATH = '/console/sso/callback';

export interface SsoFlow {
  workspaceId: string;
  state: string;
  nonce: string;
  verifier: string;
  next: string;
  startedAt: number;
}

/** The redirect URI registered at the provider: WSOPS_BASE_URL + /console/sso/callback. */
export function redirectUri(services: OidcServices): string {
  return `${services.config.baseUrl.replace(/\/+$/, '')}${SSO_CALLBACK_PATH}`;
}

/** Plain http is allowed only for a provider on this machine (tests, local development). */
function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

async function configuration(services: OidcServices, sso: SsoSettings): Promise<oidc.Configuration> {
  const client = await openidClient();
  const issuer = new URL(sso.issuer);
  const secret = services.secretBox.open(sso.clientSecretSealed);
  // The client's clock is the service's (injected in tests), so token expiry is judged by it.
  const skew = Math.round((services.clock() - Date.now()) / 1000);
  return client.discovery(
    issuer,
    sso.clientId,
    { [client.clockSkew]: skew },
    client.ClientSecretBasic(secret),
    isLoopback(issuer) ? { execute: [client.allowInsecureRequests] } : undefined,
  );
}

/** Starts a sign-in: the provider's authorization URL and the flow to seal into the cookie. */
export async function startSso(
  services: OidcServices,
  workspaceId: string,
  sso: SsoSettings,
  next: string,
): Promise<{ url: string; flow: SsoFlow }> {
  const config = await configuration(services, sso);
  const client = await openidClient();
  const flow: SsoFlow = {
    workspaceId,
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier: client.randomPKCECodeVerifier(),
    next,
    startedAt: services.clock(),
  };
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri(services),
    scope: 'openid email',
    response_type: 'code',
    code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce: flow.nonce,
  });
  return { url: url.href, flow };
}

export class SsoRefusal extends Error {}

/**
 * What the provider says of the address: `verified` only for the JSON boolean true; `missing`
 * when there is no email_verified claim at all; anything else (false, the string "false", even
 * the string "true") is `unverified`: a claim that is not the boolean is not the provider's word.
 */
export type EmailVerified = 'verified' | 'missing' | 'unverified';

function emailVerifiedOf(profile: { email_verified?: unknown }): EmailVerified {
  if (profile.email_verified === true) return 'verified';
  return profile.email_verified === undefined || profile.email_verified === null ? 'missing' : 'unverified';
}

/** Why the provider's answer was refused, in words an admin (and their IT team) can act on. */
function refusalOf(err: unknown): SsoRefusal {
  type Coded = { code?: string; cause?: Coded & { claim?: string }; error?: string; error_description?: string; message?: string };
  const e = err as Coded;
  // openid-client wraps oauth4webapi's error, whose cause names the claim.
  const claim = e.cause?.cause?.claim ?? e.cause?.claim;
  const inner = e.cause?.message ?? '';
  if (e.code === 'OAUTH_INVALID_RESPONSE' && inner.includes('"iss"')) {
    return new SsoRefusal(
      'The answer came from another issuer than the one configured for this workspace. Ask your operator to check the issuer (wsops sso set --issuer).',
    );
  }
  if (e.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' && claim === 'nonce') {
    return new SsoRefusal(
      'The ID token from the sign-in provider was not issued for this sign-in (its nonce does not match). Start again.',
    );
  }
  if (e.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' && claim === 'iss') {
    return new SsoRefusal(
      'The ID token came from another issuer than the one configured for this workspace. Ask your operator to check the issuer (wsops sso set --issuer).',
    );
  }
  if (e.code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED') {
    return new SsoRefusal(
      `The ID token from the sign-in provider has expired or is not valid yet (${claim ?? 'time'} claim). Check the server clocks, then start again.`,
    );
  }
  if (e.error)
    return new SsoRefusal(
      `The sign-in provider refused: ${e.error}${e.error_description ? ` (${e.error_description})` : ''}. Start again.`,
    );
  return new SsoRefusal(`The sign-in provider's answer could not be used (${e.message ?? 'unknown error'}). Start again.`);
}

/** Finishes a sign-in: exchanges the code (with the PKCE verifier) and checks the ID token. */
export async function finishSso(
  services: OidcServices,
  sso: SsoSettings,
  flow: SsoFlow,
  currentUrl: URL,
): Promise<{ email: string; emailVerified: EmailVerified; subject: string }> {
  let claims: oidc.IDToken | undefined;
  let profile: { email?: unknown; email_verified?: unknown } = {};
  try {
    const config = await configuration(services, sso);
    const client = await openidClient();
    const tokens = await client.authorizationCodeGrant(
      config,
      currentUrl,
      { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true },
      { redirect_uri: redirectUri(services) },
    );
    claims = tokens.claims();
    if (!claims) throw new SsoRefusal('The sign-in provider sent no ID token.');
    profile = claims as typeof profile;
    // Providers that follow the core spec strictly put the email in the UserInfo answer only
    // (bound to the ID token's subject by openid-client).
    if (typeof claims.email !== 'string') profile = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
  } catch (err) {
    if (err instanceof SsoRefusal) throw err;
    throw refusalOf(err);
  }
  const email = typeof profile.email === 'string' ? profile.email.trim().toLowerCase() : '';
  if (!email) throw new SsoRefusal('The sign-in provider did not say your email address (the "email" scope). Ask your IT team.');
  return { email, emailVerified: emailVerifiedOf(profile), subject: claims.sub };
}
