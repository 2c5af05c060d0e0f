/**
 * Real delivery workers (`bin/wsops serve --only worker`) on a test's database: started with the
 * settings the webhook suites share, and all of them killed when the file ends, so a failed
 * test leaves no process behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { after } from 'node:test';
import { TEST_SECRET } from './harness.js';
import { BIN } from './processes.js';

export interface WorkerProcesses {
  /** Starts one worker on the database at `databaseUrl`; `env` adds or overrides settings. */
  start(databaseUrl: string, env?: Record<string, string>): ChildProcess;
  /** Sends `signal` and waits for the process to exit (at once if it already has). */
  stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void>;
  /** Stops every worker started here that still runs. */
  stopAll(signal: NodeJS.Signals): Promise<void>;
}

/** Call inside a `describe`: the workers it starts are killed after that suite. */
export function workerProcesses(): WorkerProcesses {
  const children: ChildProcess[] = [];
  const stop = async (child: ChildProcess, signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  };
  const stopAll = async (signal: NodeJS.Signals) => {
    await Promise.all(children.map((c) => stop(c, signal)));
  };
  after(() => stopAll('SIGKILL'));
  return {
    start(databaseUrl, env = {}) {
      const child = spawn(process.execPath, [BIN, 'serve', '--only', 'worker'], {
        env: {
          ...process.env,
          WSOPS_DATABASE_URL: databaseUrl,
          WSOPS_SECRET: TEST_SECRET,
          WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true',
          WSOPS_DEMO: 'false',
          WSOPS_LOG_LEVEL: 'error',
          ...env,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      return child;
    },
    stop,
    stopAll,
  };
}
