/**
 * One PostgreSQL session per API process that LISTENs on the auth channel (migration 0014) and
 * reports each notification, plus the barrier that makes the key cache exact (ADR 14).
 *
 * A notification is queued when the writing transaction commits and its listeners are signalled
 * before the writer sees its COMMIT return, but a listener's backend may send it to us a little
 * later (measured here: as late as 1.6 ms after the writer's COMMIT returned). A request
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
import type pg from 'pg';
import type { Logger } from '../logger.js';
import { AUTH_CHANNEL } from './auth-change-triggers.js';
import { ListenSession } from './listen-session.js';

/** A barrier not answered in this time counts the session as lost (it may be silently dead). */
const BARRIER_TIMEOUT_MS = 2_000;
const NOT_LISTENING = Promise.resolve(false);

export class AuthListener {
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
  barrier(): Promise<boolean> {
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
