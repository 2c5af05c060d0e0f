/**
 * The API processes of `wsops serve --processes N`, forked with Node's cluster: each runs the
 * public listener on the shared port (the primary hands each new connection to one of them in
 * turn). A process that stops on its own is replaced, unless it stopped within a few seconds of
 * starting (a fault that would only repeat: bad settings, a port taken), which stops them all.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../logger.js';

/** A process that stops sooner than this after its start is not replaced: everything stops. */
const STARTING_MS = 10_000;
/** How long `stop` lets a process finish its requests before killing it. */
const STOP_GRACE_MS = 30_000;

export interface ApiProcesses {
  /** Resolves once every process listens. */
  listening: Promise<void>;
  /** API processes listening now. */
  serving(): number;
  /** SIGTERM to each process, then waits for all to exit (each is killed after 30 s). */
  stop(): Promise<void>;
}

/** Forks `count` API processes; `fail` is called when one cannot start (or keeps stopping). */
export function forkApiProcesses(count: number, logger: Logger, fail: () => void): ApiProcesses {
  const log = logger.child({ component: 'processes' });
  const startedAt = new Map<Worker, number>();
  let stopping = false;
  let listeningCount = 0;
  const serving = new Set<Worker>();
  let allListening: () => void = () => {};
  const listening = new Promise<void>((resolve) => {
    allListening = resolve;
  });
  const fork = () => startedAt.set(cluster.fork(), Date.now());
  cluster.on('listening', (worker) => {
    serving.add(worker);
    if (++listeningCount === count) allListening();
  });
  cluster.on('exit', (worker, code, signal) => {
    serving.delete(worker);
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    if (stopping) return;
    const fields = { pid: worker.process.pid, code, signal, lived_ms: lived };
    if (lived < STARTING_MS) {
      log.error(fields, 'an API process stopped right after starting; stopping all (its own log says why)');
      fail();
      return;
    }
    log.error(fields, 'an API process stopped; starting another');
    fork();
  });
  for (let i = 0; i < count; i++) fork();
  return {
    listening,
    serving: () => serving.size,
    async stop() {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
      await Promise.all(
        workers.map(
          (worker) =>
            new Promise<void>((resolve) => {
              const kill = setTimeout(() => worker.process.kill('SIGKILL'), STOP_GRACE_MS);
              worker.once('exit', () => {
                clearTimeout(kill);
                resolve();
              });
              worker.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
