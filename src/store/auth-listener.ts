/**
 * One PostgreSQL session per API process that LISTENs on the auth channel (migration 0014) and
 * reports each notification. The key cache may be trusted only while this session is
 * established: a notification sent while it is down is lost for good, so `listening` goes false
 * the moment the connection is found lost (the cache is bypassed and emptied) and true again
 * only once LISTEN has been re-issued, with a growing pause between attempts.
 */
import pg from 'pg';
import type { Logger } from '../logger.js';
import { AUTH_CHANNEL } from './auth-change-triggers.js';

const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;

export class AuthListener {
  /** True while LISTEN is in effect on an established session. */
  listening = false;
  private client: pg.Client | undefined;
  private started = false;
  private closed = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;

  /**
   * @param onChange called with each payload (`key:<id>`, `workspace:<id>`, `*`), and with `*`
   *   whenever the session is lost or (re-)established: what was cached before cannot be trusted.
   */
  constructor(
    private readonly url: string,
    private readonly onChange: (payload: string) => void,
    private readonly log: Logger,
  ) {}

  /** Connects on first call (an API process's first authentication); later calls do nothing. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    void this.connect();
  }

  private async connect(): Promise<void> {
    // The process id in the session name lets an operator (and the tests) tell the sessions apart.
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, application_name: `wsops-auth-listener-${process.pid}` });
    this.client = client;
    client.on('notification', (message) => {
      if (message.channel === AUTH_CHANNEL) this.onChange(message.payload ?? '*');
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${AUTH_CHANNEL}`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (this.client !== client) return;
    this.onChange('*');
    this.listening = true;
    if (this.retryMs > FIRST_RETRY_MS) this.log.info('auth change listener connected again; the key cache is in use');
    this.retryMs = FIRST_RETRY_MS;
  }

  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    this.onChange('*');
    client.end().catch(() => {});
    if (this.closed) return;
    this.log.warn(
      { err: err instanceof Error ? err.message : undefined, retry_in_ms: this.retryMs },
      'auth change listener lost; the key cache is bypassed (every request reads its key) until it reconnects',
    );
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => {});
  }
}
