/**
 * A real OpenID provider on 127.0.0.1 for single sign-on tests: `oidc-provider` (certified),
 * in process, with its development sign-in form (any login; the login typed is the account's
 * email address). PKCE is required; consent is granted without a prompt.
 */
import { createServer, type Server } from 'node:http';
import Provider from 'oidc-provider';
import { freePort } from './processes.js';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

export interface ProviderOptions {
  redirectUri: string;
  idTokenTtlSeconds?: number;
  /** The email_verified claim of the account signing in as `login` (default true); undefined leaves the claim out. */
  emailVerified?: (login: string) => unknown;
}

export async function startOidcProvider(options: ProviderOptions): Promise<TestProvider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = 'wsops-console';
  const clientSecret = 'a-client-secret-for-tests-only-0123456789';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    ttl: { IdToken: options.idTokenTtlSeconds ?? 3600 },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    async findAccount(_ctx, sub) {
      const verified = options.emailVerified ? options.emailVerified(sub) : true;
      return {
        accountId: sub,
        claims: async () => (verified === undefined ? { sub, email: sub } : { sub, email: sub, email_verified: verified }),
      };
    },
    // Consent is not what these tests are about: every client gets openid and email.
    async loadExistingGrant(ctx) {
      const session = ctx.oidc.session;
      const client = ctx.oidc.client;
      if (!session || !client) return undefined;
      const grantId = session.grantIdFor(client.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId as string });
      grant.addOIDCScope('openid email');
      await grant.save();
      return grant;
    },
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    issuer,
    clientId,
    clientSecret,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A provider's discovery document served from another address that calls itself the issuer:
 * ID tokens then come from the real provider, i.e. from another issuer than the one configured.
 */
export async function startIssuerImpostor(real: TestProvider): Promise<{ issuer: string; close(): Promise<void> }> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const metadata = (await (await fetch(`${real.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  const body = JSON.stringify({ ...metadata, issuer, authorization_response_iss_parameter_supported: false });
  const server = createServer((req, res) => {
    if (req.url === '/.well-known/openid-configuration') res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { issuer, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
