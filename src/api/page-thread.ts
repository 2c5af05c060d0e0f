/**
 * A page thread (page-threads.ts): its own read connection, the same page query and body
 * assembly as the event loop. It answers each job with the finished body: in a shared slot
 * when the job allows one and a slot is free (page-slots.ts), else transferred (not copied).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { HotQueries } from '../store/hot-queries.js';
import { PageQueries } from '../store/page-queries.js';
import { pageSessions } from '../store/page-sessions.js';
import { openSqliteReader } from '../store/sqlite-reader.js';
import { CursorCodec } from './cursor.js';
import { type PageJob, readPageBody } from './page-body.js';
import { SlotWriter } from './page-slots.js';
import type { ThreadAnswer, ThreadData, ThreadJob } from './page-threads.js';

const data = workerData as ThreadData;
const port = parentPort;
if (!port) throw new Error('page-thread.ts runs as a worker thread');

const sqlite = data.databaseUrl.startsWith('sqlite:');
let pages: PageQueries;
if (sqlite) {
  const reader = openSqliteReader(data.databaseUrl.slice('sqlite:'.length), data.sqliteMmapMb);
  pages = new PageQueries('sqlite', new HotQueries({ dialect: 'sqlite', sqliteReader: reader }));
} else {
  const sessions = await pageSessions(data.databaseUrl, data.postgresConnections);
  pages = new PageQueries('postgres', sessions.pages, sessions.searches);
}
const cursors = new CursorCodec(data.secret);
const slots = new SlotWriter(data.slots);

/**
 * The body as memory that can be transferred. Node serves Buffers under half its pool size from
 * one shared pool, which must not be transferred; a larger Buffer (the database's BLOB, the
 * joined page, zlib's output chunk) owns its memory, slack included, so it goes as it is.
 */
function ownBytes(body: Buffer): Uint8Array {
  return body.length >= Buffer.poolSize >>> 1 ? body : new Uint8Array(body);
}

port.on('message', ({ id, job, shared }: ThreadJob) => {
  readPageBody(pages, cursors, job as PageJob).then(
    (page) => {
      const { encoding, compressionError, next, snapshot } = page;
      const slot = shared ? slots.put(page.body) : undefined;
      if (slot !== undefined) {
        port.postMessage({ id, slot, length: page.body.length, encoding, compressionError, next, snapshot } satisfies ThreadAnswer);
        return;
      }
      const body = ownBytes(page.body);
      const answer: ThreadAnswer = { id, body, encoding, compressionError, next, snapshot };
      port.postMessage(answer, [body.buffer as ArrayBuffer]);
    },
    (err: unknown) => port.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies ThreadAnswer),
  );
});
port.postMessage({ id: 0 } satisfies ThreadAnswer);
