/** A real server on 127.0.0.1 with a seeded workspace, a SCIM token and an API key, for the SCIM suites. */
import type { AddressInfo } from 'node:net';
import { createScimToken } from '../../src/scim/tokens.js';
import type { Dialect } from '../../src/store/database.js';
import { createHarness, type Harness } from '../helpers/harness.js';

export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  json: any;
  text: string;
}

export interface ScimServer {
  h: Harness;
  base: string;
  ws: string;
  token: string;
  tokenId: string;
  apiKey: string;
  locationId: string;
  newToken(workspaceId: string): Promise<{ token: string; tokenId: string; locationId: string }>;
  scim(method: string, path: string, body?: unknown, token?: string, headers?: Record<string, string>): Promise<Answer>;
  api(path: string, key?: string): Promise<Answer>;
  close(): Promise<void>;
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, headers: res.headers, text, json: type.includes('json') && text ? JSON.parse(text) : undefined };
}

export async function startScimServer(dialect: Dialect, env: Record<string, string> = {}): Promise<ScimServer> {
  const h = await createHarness(dialect, env);
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  const ws = await h.workspace();
  const newToken = async (workspaceId: string) => {
    const location = await h.services.database.db
      .selectFrom('records')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('register', '=', 'locations')
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const t = await createScimToken(h.services.database, {
      workspaceId,
      environment: h.services.config.env,
      locationId: location.id,
      name: 'Okta',
      createdBy: 'cli',
      now: h.clock(),
    });
    return { token: t.token, tokenId: t.token_id, locationId: location.id };
  };
  const first = await newToken(ws);
  const { key } = await h.key(ws);
  const server: ScimServer = {
    h,
    base,
    ws,
    ...first,
    apiKey: key,
    newToken,
    async scim(method, path, body, token = first.token, headers = {}) {
      const res = await fetch(`${base}/scim/v2${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      return answer(res);
    },
    async api(path, key = server.apiKey) {
      return answer(await fetch(`${base}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } }));
    },
    close: () => h.close(),
  };
  return server;
}
