/**
 * One PostgreSQL session that LISTENs on a channel and comes back when it is lost: the key
 * cache's (AuthListener, below) and the delivery worker's (webhooks/dispatcher.ts). A notification
 * sent while the session is down is lost for good, so each user is told when the session is up
 * (again) and when it is lost, and decides what that means for it. Lost: the connection fails,
 * ends, or a user says so (`lost`, e.g. a query that got no answer). Retried after 1 s,
 * doubling up to 30 s while it keeps failing.
 */
import type pg from 'pg';
import type { Logger } from '../logger.js';
import { AUTH_CHANNEL } from './auth-change-triggers.js';
import type { AuthChanges } from './dialects/engine.js';
import { pgDriver } from './pg-driver.js';

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

export interface ListenEvents {
  notification(payload: string): void;
  /** LISTEN is in place: the first time, or again after a loss (`again`). */
  up(again: boolean): void;
  /** The session is lost (`err` when there was one); the next attempt is in `retryMs`. */
  down(err: unknown, retryMs: number): void;
}

export class ListenSession {
  private current: pg.Client | undefined;
  private listening = false;
  private started = false;
  private closed = false;
  /** Whether the session was ever lost (or never came up): the next `up` is `again`. */
  private lostBefore = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    /** Shown in pg_stat_activity: tells an operator (and the tests) what the session is for. */
    private readonly applicationName: string,
    private readonly events: ListenEvents,
  ) {}

  /** The session, while LISTEN is in place. */
  get client(): pg.Client | undefined {
    return this.listening ? this.current : undefined;
  }

  /** Connects (once; later calls do nothing). */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    void this.connect();
  }

  private async connect(): Promise<void> {
    const client = new (pgDriver().Client)({ connectionString: this.url, keepAlive: true, application_name: this.applicationName });
    this.current = client;
    client.on('notification', (message) => {
      if (message.channel === this.channel) this.events.notification(message.payload ?? '');
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.current !== client) return;
    this.listening = true;
    this.retryMs = FIRST_RETRY_MS;
    this.events.up(this.lostBefore);
  }

  /** Gives up on `client` (when it is still the session) and tries again later. */
  lost(client: pg.Client, err?: unknown): void {
    if (this.current !== client) return;
    this.current = undefined;
    this.listening = false;
    client.end().catch(() => {});
    if (this.closed) return;
    this.lostBefore = true;
    const retryMs = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
    this.retryTimer = setTimeout(() => void this.connect(), retryMs);
    this.retryTimer.unref();
    this.events.down(err, retryMs);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.current;
    this.current = undefined;
    this.listening = false;
    await client?.end().catch(() => {});
  }
}

/** A barrier not answered in this time counts the session as lost (it may be silently dead). */
const BARRIER_TIMEOUT_MS = 2_000;
const NOT_LISTENING = Promise.resolve(false);

/**
 * The key cache's changes on PostgreSQL (ADR 14): one session per API process that LISTENs on
 * the auth channel (migration 0014) and reports each notification, plus the barrier that makes
 * the key cache exact.
 *
 * A notification is queued when the writing transaction commits and its listeners are signalled
 * before the writer sees its COMMIT return, but a listener's backend may send it to us a little
 * later (milliseconds after the writer's COMMIT returned; ADR 14). A request
 * that arrives in that gap would meet the stale entry. The barrier closes it: a query sent on the
 * listening session after the request arrived is answered only after every notification already
 * signalled to that backend (PostgreSQL sends pending notifications before it reads the next
 * query and before ReadyForQuery), so once its answer is in, every change committed before the
 * request arrived has been handled. Requests arriving together share one barrier.
 *
 * The cache may be trusted only while this session is established: a notification sent while
 * it is down is lost for good, so the barrier answers false from the moment the connection is
 * lost (the cache is bypassed and emptied) until LISTEN has been issued again, retried with a
 * growing pause.
 */
export class AuthListener implements AuthChanges {
  private readonly session: ListenSession;
  /** The barrier query on the wire now, and the one queued behind it (sent once it is answered). */
  private inFlight: Promise<boolean> | undefined;
  private queued: Promise<boolean> | undefined;

  /**
   * @param onChange called with each payload (`key:<id>`, `workspace:<id>`, `*`), and with `*`
   *   whenever the session is lost or (re-)established: what was cached before cannot be trusted.
   */
  constructor(url: string, onChange: (payload: string) => void, log: Logger) {
    // The process id in the session name lets an operator (and the tests) tell the sessions apart.
    this.session = new ListenSession(url, AUTH_CHANNEL, `wsops-auth-listener-${process.pid}`, {
      notification: (payload) => onChange(payload || '*'),
      up: (again) => {
        onChange('*');
        if (again) log.info('auth change listener connected again; the key cache is in use');
      },
      down: (err, retryMs) => {
        this.inFlight = undefined;
        this.queued = undefined;
        onChange('*');
        log.warn(
          { err: err instanceof Error ? err.message : undefined, retry_in_ms: retryMs },
          'auth change listener lost; the key cache is bypassed (every request reads its key) until it reconnects',
        );
      },
    });
  }

  /**
   * Resolves true once every change committed before this call has been reported to `onChange`;
   * false while the session is not established (connecting at the first call).
   */
  trusted(): Promise<boolean> {
    this.session.start();
    const client = this.session.client;
    if (client === undefined) return NOT_LISTENING;
    // A barrier still queued is sent after now, so it covers this caller too.
    if (this.queued) return this.queued;
    const barrier = this.sendBarrier(client);
    if (this.inFlight) this.queued = barrier;
    else this.inFlight = barrier;
    void barrier.then(() => {
      if (this.inFlight !== barrier) return;
      this.inFlight = this.queued;
      this.queued = undefined;
    });
    return barrier;
  }

  private sendBarrier(client: pg.Client): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        resolve(false);
        this.session.lost(client, new Error(`no answer to the barrier query in ${BARRIER_TIMEOUT_MS} ms`));
      }, BARRIER_TIMEOUT_MS);
      // The empty query: the cheapest round trip (EmptyQueryResponse, ReadyForQuery).
      client.query('').then(
        () => {
          clearTimeout(timer);
          resolve(this.session.client === client);
        },
        () => {
          clearTimeout(timer);
          resolve(false);
        },
      );
    });
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
