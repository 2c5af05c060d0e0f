/**
 * List pages read off the event loop (ADR 16). A page of 100 costs the database about 0.1–0.2 ms
 * and brotli about 0.1 ms more, all synchronous on SQLite: on the event loop that time is lost
 * to every other request. `wsops serve` starts WSOPS_PAGE_THREADS worker threads before it
 * listens, each with its own read connection; a thread reads the page, assembles the body, signs
 * the next cursor and compresses, then hands the finished bytes back (about 10 µs of the
 * event loop per page): in a slot of memory shared with the event loop (page-slots.ts), or by
 * transfer when no slot fits.
 *
 * Nothing is lost to a thread: until one is ready, when none is configured, and for every job
 * in flight on a thread that exits, the page is read on the event loop by the same function.
 * A thread that exits is started again (after 1 s, doubling to 30 s while it keeps exiting).
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.js';
import type { PageQueries } from '../store/page-queries.js';
import type { Coding } from './content-codings.js';
import type { CursorCodec, CursorPosition } from './cursor.js';
import { type PageBody, type PageJob, readPageBody } from './page-body.js';
import { createSlotArena, type SlotArena, SlotReader } from './page-slots.js';
import { pageThreadModule } from './page-thread-code.js';
import { type Currency, pageKey, ReadAhead, startsSync } from './read-ahead.js';

/** What a thread is started with. */
export interface PageThreadData {
  databaseUrl: string;
  sqliteMmapMb: number;
  /** The server secret: a thread signs the next cursor itself. */
  secret: string;
  /** PostgreSQL: connections of each thread's own pool. */
  postgresConnections: number;
}

/** What a thread gets: the deployment's data and its own slots. */
export interface ThreadData extends PageThreadData {
  slots: SlotArena;
}

export interface ThreadJob {
  id: number;
  job: PageJob;
  /**
   * The body may come back in a shared slot: only for a page the caller sends and then
   * releases (`PageBody.release`). A page read ahead may wait or be dropped, so it is transferred.
   */
  shared: boolean;
}

/** A thread's answer to job `id`; id 0 says the thread is ready. */
export interface ThreadAnswer {
  id: number;
  /** The body, transferred; or `slot` and `length` name where it is in the shared slots. */
  body?: Uint8Array;
  slot?: number;
  length?: number;
  encoding?: Coding;
  compressionError?: string;
  next?: CursorPosition;
  snapshot?: string;
  error?: string;
}

interface Pending {
  resolve(page: PageBody): void;
  reject(err: Error): void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  /** Start another when this one exits (false once it is stopped on purpose). */
  restart: boolean;
  pending: Map<number, Pending>;
  slots: SlotReader;
}

/** A thread exited with the job in flight: the job is read again on the event loop. */
class ThreadGone extends Error {}

const FIRST_RESTART_MS = 1000;
const THREAD_YOUNG_GENERATION_MB = 4;
const MAX_RESTART_MS = 30_000;

export class PageReader {
  private readonly threads: Thread[] = [];
  private nextId = 1;
  private closing = false;
  private restartMs = FIRST_RESTART_MS;
  private readonly restartTimers = new Set<NodeJS.Timeout>();
  private bundleWarned = false;

  /** Pages of walks read ahead on idle threads (read-ahead.ts). */
  readonly readAhead: ReadAhead;

  constructor(
    /** The page queries of the event loop. */
    readonly queries: PageQueries,
    private readonly cursors: CursorCodec,
    private readonly logger: Logger,
    /** How read-ahead tells a page is still current; without it nothing is read ahead. */
    currency?: Currency,
  ) {
    this.readAhead = new ReadAhead(currency);
  }

  /**
   * Reads a page: the one read ahead for it when there is one and it is current, else on the
   * least busy ready thread, or on the event loop when none is ready. A page that continues a
   * walk this process answered, or that starts an `updated_since` sync, has its next page read
   * ahead when a thread is idle.
   */
  async read(job: PageJob): Promise<PageBody> {
    if (!this.readAhead.enabled) return this.readNow(job);
    const key = pageKey(job);
    const ahead = this.readAhead.take(key);
    const following = ahead !== undefined || this.readAhead.follows(key) || startsSync(job);
    // A page read ahead that is stale, or failed (its thread exited, say), is read again now.
    const page = (ahead && (await ahead)) ?? (await this.readNow(job));
    if (page.next) this.readAhead.answered(job, page.next, following ? this.idleThread() : undefined);
    return page;
  }

  private async readNow(job: PageJob): Promise<PageBody> {
    const thread = this.pick();
    if (!thread) return readPageBody(this.queries, this.cursors, job);
    try {
      return await this.send(thread, job, true);
    } catch (err) {
      if (err instanceof ThreadGone) return readPageBody(this.queries, this.cursors, job);
      throw err;
    }
  }

  /** A reader on a ready thread with nothing in flight, if there is one. */
  private idleThread(): ((job: PageJob) => Promise<PageBody>) | undefined {
    const thread = this.pick();
    if (!thread || thread.pending.size > 0) return undefined;
    return (job) => this.send(thread, job, false);
  }

  /** Starts `count` threads; resolves once each is ready or has failed to start (its pages then stay on the event loop). */
  async start(count: number, data: PageThreadData): Promise<void> {
    await Promise.all(Array.from({ length: count }, () => this.spawn(data)));
  }

  /** Slots of every thread holding a body not yet released (tests: none once responses have closed). */
  get heldSlots(): number {
    return this.threads.reduce((n, t) => n + t.slots.held, 0);
  }

  /** Threads ready to take a page (for tests and metrics). */
  get readyThreads(): number {
    return this.threads.filter((t) => t.ready).length;
  }

  /**
   * Stops every thread. Their jobs in flight are read on the event loop, so a request never
   * fails for it; with `restart`, each thread is started again as after a crash.
   */
  async stopThreads(restart = false): Promise<void> {
    for (const t of this.threads) t.restart = restart;
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }

  async close(): Promise<void> {
    this.closing = true;
    this.readAhead.clear();
    for (const timer of this.restartTimers) clearTimeout(timer);
    await this.stopThreads();
  }

  private pick(): Thread | undefined {
    let best: Thread | undefined;
    for (const t of this.threads) if (t.ready && (!best || t.pending.size < best.pending.size)) best = t;
    return best;
  }

  private send(thread: Thread, job: PageJob, shared: boolean): Promise<PageBody> {
    const id = this.nextId++;
    return new Promise<PageBody>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ id, job, shared } satisfies ThreadJob);
    });
  }

  private async spawn(data: PageThreadData): Promise<void> {
    const { url, bundleError } = await pageThreadModule();
    if (bundleError && !this.bundleWarned) {
      this.bundleWarned = true;
      this.logger.warn({ err: bundleError }, 'could not bundle the page thread; it starts through tsx, which is slower');
    }
    if (this.closing) return;
    const arena = createSlotArena();
    const worker = new Worker(url, {
      workerData: { ...data, slots: arena } satisfies ThreadData,
      // A thread keeps few objects alive (its pages go out as external memory): a small young
      // generation instead of the one `--max-semi-space-size` sizes for the event loop.
      resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB },
    });
    // A thread never keeps the process alive: `close()` ends it, and so does the process's exit.
    worker.unref();
    const thread: Thread = { worker, ready: false, restart: true, pending: new Map(), slots: new SlotReader(arena) };
    this.threads.push(thread);
    return new Promise<void>((started) => {
      worker.on('message', (answer: ThreadAnswer) => {
        if (answer.id === 0) {
          thread.ready = true;
          this.restartMs = FIRST_RESTART_MS;
          started();
          return;
        }
        const pending = thread.pending.get(answer.id);
        if (!pending) return;
        thread.pending.delete(answer.id);
        if (answer.error !== undefined || (!answer.body && answer.slot === undefined)) {
          pending.reject(new Error(answer.error ?? 'the page thread sent no body'));
          return;
        }
        // The route logs a compression failure, wherever the page was read.
        const { encoding, compressionError, next, snapshot } = answer;
        if (answer.slot !== undefined) {
          let taken: { body: Buffer; release: () => void };
          try {
            taken = thread.slots.take(answer.slot, answer.length ?? -1);
          } catch (err) {
            pending.reject(err as Error);
            return;
          }
          pending.resolve({ ...taken, encoding, compressionError, next, snapshot });
          return;
        }
        const sent = answer.body as Uint8Array;
        const body = Buffer.from(sent.buffer, sent.byteOffset, sent.byteLength);
        pending.resolve({ body, encoding, compressionError, next, snapshot });
      });
      worker.on('error', (err) => this.logger.error({ err }, 'a page thread failed; its pages are read on the event loop'));
      worker.once('exit', (code) => {
        thread.ready = false;
        this.threads.splice(this.threads.indexOf(thread), 1);
        for (const p of thread.pending.values()) p.reject(new ThreadGone(`page thread exited (${code})`));
        thread.pending.clear();
        started();
        if (this.closing || !thread.restart) return;
        const delay = this.restartMs;
        this.restartMs = Math.min(MAX_RESTART_MS, this.restartMs * 2);
        this.logger.warn({ code, restart_in_ms: delay }, 'a page thread exited; starting another');
        const timer = setTimeout(() => {
          this.restartTimers.delete(timer);
          if (!this.closing) void this.spawn(data);
        }, delay);
        timer.unref();
        this.restartTimers.add(timer);
      });
    });
  }
}
