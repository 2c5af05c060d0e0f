/**
 * `wsops-mirror`: keeps a local copy of chosen registers current. Before touching the
 * database it checks the configuration, that the server answers and that the key holds every
 * chosen register's scope; any failure is one line on stderr and exit status 2.
 */
import { createServer } from 'node:http';
import { WsopsClient } from '../client.js';
import { AuthenticationError, WsopsError } from '../errors.js';
import { nodeWebhookHandler } from '../webhooks/handlers.js';
import { IdempotencyGuard } from '../webhooks/idempotency.js';
import { type MirrorConfig, MirrorConfigError, parseConfig, USAGE } from './config.js';
import { openStore } from './open-store.js';
import type { MirrorStore } from './store.js';
import { type SyncSummary, syncOnce } from './sync.js';

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
}

function summaryLine(s: SyncSummary): string {
  const parts = Object.entries(s.registers).map(
    ([path, r]) => `${path} ${r.mode === 'full' ? 'full' : 'incr'} +${r.upserted}${r.removed ? ` -${r.removed}` : ''}`,
  );
  return `wsops-mirror: ${s.upserted} upserted, ${s.removed} removed in ${(s.durationMs / 1000).toFixed(2)} s (${parts.join(', ')})`;
}

/** The checks that must pass before anything is written: the server answers, the key holds each scope. */
async function preflight(client: WsopsClient, config: MirrorConfig): Promise<void> {
  let held: string[];
  try {
    held = (await client.scopes()).scopes;
  } catch (err) {
    if (err instanceof AuthenticationError)
      throw new MirrorConfigError(
        `WSOPS_API_KEY is not accepted by ${config.baseUrl} (unknown, revoked, expired or of the other environment)`,
      );
    if (err instanceof WsopsError) throw new MirrorConfigError(`cannot use ${config.baseUrl}: ${err.message}`);
    throw err;
  }
  const missing = config.registers.filter((r) => !held.includes(r.scope));
  if (missing.length > 0) {
    throw new MirrorConfigError(
      `the key lacks ${[...new Set(missing.map((r) => r.scope))].join(', ')} (needed for ${missing.map((r) => r.path).join(', ')}); add the scope or leave those registers out with --registers`,
    );
  }
}

export async function main(
  argv: readonly string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env },
): Promise<number> {
  let config: MirrorConfig;
  let store: MirrorStore;
  let client: WsopsClient;
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    config = parseConfig(argv, io.env);
    client = new WsopsClient({ apiKey: config.apiKey, baseUrl: config.baseUrl, maxRetries: 1, timeoutMs: 30_000 });
    await preflight(client, config);
    try {
      store = await openStore(config.databaseUrl);
    } catch (err) {
      throw new MirrorConfigError(`cannot open WSOPS_MIRROR_DATABASE_URL: ${(err as Error).message}`);
    }
  } catch (err) {
    if (err instanceof MirrorConfigError) {
      io.stderr.write(`wsops-mirror: ${err.message}\n`);
      return 2;
    }
    throw err;
  }

  const progress = io.stderr.isTTY && !config.json;
  let full = config.full;
  const run = async () => {
    const summary = await syncOnce({
      client,
      store,
      registers: config.registers,
      full,
      overlapMs: config.overlapMs,
      pageSize: config.pageSize,
      onProgress: progress ? (r, n) => io.stderr.write(`\r\x1b[K${r.path}: ${n.toLocaleString('en')} records`) : undefined,
      onNotice: (r, message) => io.stderr.write(`${progress ? '\r\x1b[K' : ''}wsops-mirror: ${r.path}: ${message}\n`),
    });
    full = false; // --full applies to the first run only
    if (progress) io.stderr.write('\r\x1b[K');
    io.stdout.write(config.json ? `${JSON.stringify(summary)}\n` : `${summaryLine(summary)}\n`);
    return summary;
  };

  const fail = (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    io.stdout.write(config.json ? `${JSON.stringify({ error: message })}\n` : `wsops-mirror: run failed: ${message}\n`);
  };

  try {
    if (config.mode === 'once') {
      await run();
      return 0;
    }
    const stop = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    if (config.mode === 'watch') {
      let stopped = false;
      stop.then(() => {
        stopped = true;
      });
      while (!stopped) {
        await run().catch(fail);
        if (stopped) break;
        // The pending timer is what keeps the process alive between runs (signal listeners do
        // not), so it is cleared on stop rather than unref'd.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([stop, new Promise((r) => (timer = setTimeout(r, config.intervalMs)))]);
        clearTimeout(timer);
      }
      return 0;
    }
    // --listen: each verified event triggers an incremental run; runs never overlap, and
    // events arriving during a run are coalesced into one more run after it. Once stopping,
    // no run starts; the one under way finishes before the store closes.
    let running: Promise<unknown> | undefined;
    let again = false;
    let stopping = false;
    const trigger = () => {
      if (stopping) return;
      if (running) {
        again = true;
        return;
      }
      running = run()
        .catch(fail)
        .finally(() => {
          running = undefined;
          if (again) {
            again = false;
            trigger();
          }
        });
    };
    const server = createServer(
      nodeWebhookHandler({
        secret: config.webhookSecrets,
        idempotency: new IdempotencyGuard(),
        onEvent: () => trigger(),
        // A refused delivery is worth a line: a wrong WSOPS_WEBHOOK_SECRET shows up here first.
        onError: (err) => io.stderr.write(`wsops-mirror: refused a delivery: ${err.message}\n`),
      }),
    );
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.listenPort, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      io.stderr.write(`wsops-mirror: cannot listen on port ${config.listenPort}: ${(err as Error).message}\n`);
      return 2;
    }
    io.stderr.write(`wsops-mirror: listening for webhooks on port ${config.listenPort}\n`);
    trigger();
    await stop;
    stopping = true;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    while (running) await running;
    await closed;
    return 0;
  } finally {
    await store.close();
  }
}
