/**
 * One PostgreSQL session that LISTENs on a channel and comes back when it is lost: the key
 * cache's (auth-listener.ts) and the delivery worker's (webhooks/dispatcher.ts). A notification
 * sent while the session is down is lost for good, so each user is told when the session is up
 * (again) and when it is lost, and decides what that means for it. Lost: the connection fails,
 * ends, or a user says so (`lost`, e.g. a query that got no answer). Retried after 1 s,
 * doubling up to 30 s while it keeps failing.
 */
import type pg from 'pg';
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
