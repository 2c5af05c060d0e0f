/**
 * SQLite's WAL checkpoints, off the event loop (ADR 36). By default the connection whose commit
 * takes the WAL past 1,000 pages copies them into the database file and fsyncs it, inside that
 * commit, on the event loop: CPU and a wait for the disk, every few dozen single-record writes.
 * That was the single PUT's p99 (and a stall of every request during an import; ADR 36).
 * Here the writer never checkpoints (wal_autocheckpoint = 0): once the WAL
 * file passes 4 MB a worker thread opens its own connection and runs PASSIVE checkpoints (they
 * never block readers or writers) every CHECKPOINT_EVERY_MS. A process that never writes much
 * (a CLI command, a test) never starts the thread; SQLite checkpoints at its last close anyway.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** The WAL size that starts the checkpoint thread: SQLite's own default threshold (1,000 pages). */
const START_AT_BYTES = 4 * 1024 * 1024;
const WATCH_EVERY_MS = 1000;
export const CHECKPOINT_EVERY_MS = 250;

/**
 * The thread, as source (CommonJS, evaluated): a file would need the TypeScript loader in the
 * thread when run from the sources, and a thread that loads only better-sqlite3 stays small.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path);
db.exec('PRAGMA busy_timeout = 1000');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try { checkpoint.get(); } catch { /* SQLITE_BUSY: another process's checkpoint; the next turn tries again */ }
}, workerData.everyMs);
parentPort.once('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

export interface Checkpoints {
  close(): Promise<void>;
}

export function checkpointInBackground(writer: SQLite.Database, path: string): Checkpoints {
  writer.exec('PRAGMA wal_autocheckpoint = 0');
  let worker: Worker | undefined;
  let exited: Promise<void> | undefined;
  const watch = setInterval(() => {
    let size = 0;
    try {
      size = statSync(`${path}-wal`).size;
    } catch {
      return;
    }
    if (size < START_AT_BYTES) return;
    clearInterval(watch);
    const w = new Worker(THREAD, {
      eval: true,
      workerData: { path, everyMs: CHECKPOINT_EVERY_MS, driver: createRequire(import.meta.url).resolve('better-sqlite3') },
    });
    exited = new Promise((resolve) => w.once('exit', () => resolve()));
    // A thread that fails (the file removed under it) leaves the checkpoints to SQLite again.
    w.on('error', () => writer.exec('PRAGMA wal_autocheckpoint = 1000'));
    w.unref();
    worker = w;
  }, WATCH_EVERY_MS);
  watch.unref();
  return {
    async close() {
      clearInterval(watch);
      if (!worker) return;
      worker.ref(); // the process waits until the thread has closed its connection
      worker.postMessage('close');
      await exited;
    },
  };
}
