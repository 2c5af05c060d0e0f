import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/app.js';
import { lastUsesWritten } from '../../src/keys/auth.js';
import { createKey } from '../../src/keys/keys.js';
import { READ_SCOPES } from '../../src/registers/define.js';
import { seedWorkspace } from '../../src/seed/seed.js';
import { createServices, type Services } from '../../src/services.js';
import type { Dialect } from '../../src/store/database.js';
import { createWorkspace, parseModules } from '../../src/workspaces/workspaces.js';
import { type TestClock, testClock } from './clock.js';
import { createTestDatabase } from './databases.js';
import { OpenApiValidator } from './openapi-validator.js';

export const TEST_SECRET = 'test-secret-test-secret-test-secret-0123';

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  json: any;
}

export interface Harness {
  dialect: Dialect;
  services: Services;
  app: FastifyInstance;
  clock: TestClock;
  databaseUrl: string;
  /** GET through the real app (inject), every response checked against the served OpenAPI. */
  get(url: string, key?: string, headers?: Record<string, string>): Promise<ApiResponse>;
  workspace(options?: { modules?: string; seed?: boolean }): Promise<string>;
  key(
    workspaceId: string,
    scopes?: readonly string[],
    options?: { env?: 'live' | 'test'; days?: number },
  ): Promise<{ key: string; keyId: string }>;
  /** Settles when the last-use writes of the requests answered so far have landed (the response does not wait for them). */
  lastUsesWritten(): Promise<void>;
  /** Stops the app and its services but keeps the database (a stopped server); `close` then only drops it. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/**
 * One validator per served document in a test process: its schemas are compiled once and reused
 * by every rig that serves the same document, instead of again for each.
 */
const validators = new Map<string, OpenApiValidator>();
function validatorFor(document: string): OpenApiValidator {
  let validator = validators.get(document);
  if (!validator) {
    validator = new OpenApiValidator(JSON.parse(document));
    validators.set(document, validator);
  }
  return validator;
}

export async function createHarness(dialect: Dialect, env: Record<string, string> = {}): Promise<Harness> {
  const database = await createTestDatabase(dialect, { migrated: true });
  const clock = testClock();
  const config = loadConfig({
    WSOPS_DATABASE_URL: database.url,
    WSOPS_SECRET: TEST_SECRET,
    WSOPS_RATE_LIMIT_PER_SECOND: '100000',
    WSOPS_RATE_LIMIT_BURST: '100000',
    WSOPS_MAX_KEYS: '100000',
    // Suites send many wrong keys from one address on purpose; the throttle has its own tests.
    WSOPS_AUTH_FAILURES_PER_MINUTE: '1000000',
    ...env,
  });
  const services = await createServices(config, { clock });
  const app = buildApp(services);
  await app.ready();
  const served = await app.inject({ method: 'GET', url: '/developers/openapi.json' });
  const validator = validatorFor(served.body);
  let seedCounter = 0;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await app.close();
    await services.close();
  };
  return {
    dialect,
    services,
    app,
    clock,
    databaseUrl: database.url,
    async get(url, key, headers = {}) {
      const res = await app.inject({
        method: 'GET',
        url,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
      });
      const contentType = res.headers['content-type'] as string | undefined;
      const json = contentType?.includes('json') ? JSON.parse(res.body) : undefined;
      validator.check('GET', url, res.statusCode, contentType, json);
      return { status: res.statusCode, headers: res.headers, body: res.body, json };
    },
    async workspace(options = {}) {
      const ws = await createWorkspace(
        services.database.db,
        `Test ${++seedCounter}`,
        parseModules(options.modules ?? 'all'),
        new Date(clock()).toISOString(),
      );
      if (options.seed !== false) await seedWorkspace(services, ws.id, { scale: 1, seed: 'test', now: clock() });
      return ws.id;
    },
    async key(workspaceId, scopes = READ_SCOPES, options = {}) {
      const k = await createKey(services.database, {
        workspaceId,
        scopes: [...scopes],
        environment: options.env ?? config.env,
        days: options.days,
        now: clock(),
        maxKeys: config.maxKeys,
      });
      return { key: k.key, keyId: k.key_id };
    },
    lastUsesWritten: () => lastUsesWritten(services.database.db),
    stop,
    async close() {
      await stop();
      await database.drop();
    },
  };
}
