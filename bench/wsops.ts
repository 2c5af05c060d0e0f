/**
 * How every benchmark starts wsops and gets a key: one place for the production command line,
 * the benchmark environment and the secret the seeding process and the server share.
 */
import type { ChildProcess } from 'node:child_process';
import { createKey } from '../src/keys/keys.js';
import type { Services } from '../src/services.js';
import { startProcess } from './processes.js';

/** Signs cursors and encrypts webhook secrets; the seeding process and the server must agree. */
export const BENCH_SECRET = 'bench-secret-bench-secret-bench-secret-00';

/** Node flags of every benchmarked server (and the naive baselines): the README's production command line. */
export const SERVER_FLAGS = ['--max-semi-space-size=32', '--min-semi-space-size=8'];

export interface WsopsOptions {
  /** Before `--port`, e.g. `['--only', 'api']`. */
  serveArgs?: string[];
  /** Node flags after SERVER_FLAGS, e.g. a module to `--import`. */
  nodeFlags?: string[];
  /** Added to (or overriding) the benchmark environment. */
  env?: Record<string, string>;
}

/**
 * `wsops serve` on `port` over a benchmark database: no demo data, warnings only, and the
 * per-key rate limit out of the way of the load. Resolves once `/healthz` answers.
 */
export function startWsops(databaseUrl: string, port: number, options: WsopsOptions = {}): Promise<ChildProcess> {
  return startProcess(
    [...SERVER_FLAGS, ...(options.nodeFlags ?? []), 'bin/wsops', 'serve', ...(options.serveArgs ?? []), '--port', String(port)],
    {
      WSOPS_DATABASE_URL: databaseUrl,
      WSOPS_SECRET: BENCH_SECRET,
      WSOPS_DEMO: 'false',
      WSOPS_LOG_LEVEL: 'warn',
      WSOPS_RATE_LIMIT_PER_SECOND: '1000000',
      WSOPS_RATE_LIMIT_BURST: '1000000',
      ...options.env,
    },
    `http://127.0.0.1:${port}/healthz`,
  );
}

/** A test-environment key that reads assets, what the benchmark clients send. */
export function assetsReadKey(
  services: Services,
  workspaceId: string,
  now: number,
  name?: string,
): Promise<{ key: string; key_id: string }> {
  return createKey(services.database, {
    workspaceId,
    scopes: ['assets:read'],
    environment: 'test',
    ...(name ? { name } : {}),
    now,
    maxKeys: 20,
  });
}
