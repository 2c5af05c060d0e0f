/**
 * Several real API processes (`bin/wsops serve --only api`) on one database, each with its own
 * public and internal listener: the production shape of several hosts behind a load balancer,
 * where nothing held in one process's memory is seen by another. Races that a guarantee must
 * survive are sent across them (test/helpers/races.ts hands requests to the processes in turn).
 */
import { randomBytes } from 'node:crypto';
import { TEST_SECRET } from './harness.js';
import { freePort, type Running, startWsops, until } from './processes.js';

export interface ApiProcesses {
  /** `http://127.0.0.1:<port>` of each process's public listener. */
  publicUrls: string[];
  /** `http://127.0.0.1:<port>` of each process's internal listener (operator API). */
  internalUrls: string[];
  /** The operator token the internal write routes take (`Authorization: Bearer ...`). */
  operatorToken: string;
  /** Each process's log so far (for failure messages). */
  output(): string;
  /** Whether every process still runs. */
  allRunning(): boolean;
  stop(): Promise<void>;
}

/** Starts `count` API processes on `databaseUrl` (already migrated) and waits until both listeners of each answer. */
export async function startApiProcesses(databaseUrl: string, count = 2, env: Record<string, string> = {}): Promise<ApiProcesses> {
  const operatorToken = randomBytes(24).toString('hex');
  const started: { running: Running; publicUrl: string; internalUrl: string }[] = [];
  for (let i = 0; i < count; i++) {
    const [port, internalPort] = [await freePort(), await freePort()];
    const running = startWsops(['serve', '--only', 'api'], {
      WSOPS_DATABASE_URL: databaseUrl,
      WSOPS_SECRET: TEST_SECRET,
      WSOPS_PORT: String(port),
      WSOPS_INTERNAL_PORT: String(internalPort),
      WSOPS_OPERATOR_TOKEN: operatorToken,
      WSOPS_LOG_LEVEL: 'warn',
      WSOPS_RATE_LIMIT_PER_SECOND: '100000',
      WSOPS_RATE_LIMIT_BURST: '100000',
      WSOPS_AUTH_FAILURES_PER_MINUTE: '1000000',
      ...env,
    });
    started.push({ running, publicUrl: `http://127.0.0.1:${port}`, internalUrl: `http://127.0.0.1:${internalPort}` });
  }
  const output = () => started.map((s, i) => `--- process ${i + 1} ---\n${s.running.output()}`).join('\n');
  const stop = async () => {
    await Promise.all(started.map((s) => s.running.stop()));
  };
  try {
    for (const s of started) {
      await until(
        async () => {
          if (s.running.child.exitCode !== null) throw new Error(`an API process exited while starting:\n${output()}`);
          // Both listeners: the public one binds after the internal one answers.
          const ready = await fetch(`${s.internalUrl}/readyz`).catch(() => undefined);
          const serving = await fetch(`${s.publicUrl}/healthz`).catch(() => undefined);
          return ready?.status === 200 && serving?.status === 200;
        },
        60_000,
        `API process at ${s.publicUrl} to be ready`,
        50,
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    publicUrls: started.map((s) => s.publicUrl),
    internalUrls: started.map((s) => s.internalUrl),
    operatorToken,
    output,
    allRunning: () => started.every((s) => s.running.child.exitCode === null && s.running.child.signalCode === null),
    stop,
  };
}
