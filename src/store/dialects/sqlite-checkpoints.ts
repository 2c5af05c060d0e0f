/**
 * SQLite's WAL checkpoints, off the event loop (ADR 36). By default the connection whose commit
 * takes the WAL past 1,000 pages copies them into the database file and fsyncs it, inside that
 * commit, on the event loop: CPU and a wait for the disk, every few dozen single-record writes.
 * That was the single PUT's p99 (and a stall of every request during an import; ADR 36).
 * Here the writer never checkpoints (wal_autocheckpoint = 0): once the WAL
 * file passes 4 MB a worker thread opens its own connection and runs PASSIVE checkpoints (they
 * never block readers or writers) every CHECKPOINT_EVERY_MS. A process that never writes much
 * (a CLI command, a test) never starts the thread; SQLite checkpoints at its last close anyway.
 *
 * A PASSIVE checkpoint never lets the WAL start over while writes keep coming: SQLite reuses the
 * file from its start only when a writer finds every frame copied, and under a steady stream of
 * writes (actions, an API beside a worker, an import) a new commit always lands first. The WAL
 * then grew without bound, gigabytes in minutes of domain actions (ADR 42). So once
 * it holds WAL_LIMIT_BYTES, the thread runs one RESTART checkpoint: it takes the write lock,
 * copies the few frames the PASSIVE one left, waits for readers to leave the WAL, and the next
 * commit starts the WAL over; journal_size_limit then cuts the file back. Writers wait meanwhile
 * (BEGIN IMMEDIATE waits on a timer, off the event loop), at most RESTART_WAIT_MS for readers.
 * While a long read (a backup) holds older frames the thread does not try: each try held the
 * writers for those 20 ms, every turn, for the whole read.
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
 * The WAL a RESTART checkpoint starts over, and the size SQLite cuts the file back to when it
 * does (journal_size_limit, set in sqlite.ts).
 */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;
/** How long a RESTART checkpoint waits for a writer or readers before it gives the turn up. */
const RESTART_WAIT_MS = 20;
/**
 * The frames a PASSIVE checkpoint may leave for a RESTART to copy (4 MB): short reads hold back
 * only the last few commits; more means a long read is under way.
 */
const RESTART_REST_FRAMES = 1000;

/**
 * The thread, as source (CommonJS, evaluated): a file would need the TypeScript loader in the
 * thread when run from the sources, and a thread that loads only better-sqlite3 stays small.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path);
db.exec('PRAGMA busy_timeout = ' + workerData.restartWaitMs);
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');
const restartAtFrames = Math.floor(workerData.restartAtBytes / (db.pragma('page_size', { simple: true }) + 24));
const timer = setInterval(() => {
  try {
    const { log, checkpointed } = passive.get();
    // A long read (a backup) holds the frames after its start: a RESTART would wait for it in vain
    // while holding the writers, so it waits until the PASSIVE one copies nearly all.
    if (log >= restartAtFrames && log - checkpointed < workerData.restartRestFrames) restart.get();
  } catch { /* SQLITE_BUSY: another process's checkpoint; the next turn tries again */ }
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
      workerData: {
        path,
        everyMs: CHECKPOINT_EVERY_MS,
        restartAtBytes: WAL_LIMIT_BYTES,
        restartWaitMs: RESTART_WAIT_MS,
        restartRestFrames: RESTART_REST_FRAMES,
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      },
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
