/**
 * How PostgreSQL's delivery workers learn of committed jobs (LISTEN `wsops_jobs`, dispatcher.ts):
 * the process that wrote them says so after its commit, from a session of its own. Every
 * statement of the process's Kysely instances goes through `announcingDialect`, which sees the
 * inserts into delivery_jobs (the outbox's, `wsops copy`'s, whatever their caller) and announces
 * once the transaction holding them has committed; nothing above the store has to remember to.
 *
 * Why not a trigger (migration 0003, dropped by 0033): a NOTIFY sent inside the writing
 * transaction takes a cluster-wide lock before its commit and holds it past the commit's WAL
 * flush, so every action's commit ran one at a time (ADR 42). Here the action commits without it,
 * and a burst of commits costs one NOTIFY at a time per process, on a session with
 * synchronous_commit off (a notification is not worth a WAL flush).
 *
 * A lost announcement (the session down, the process killed between the commit and the NOTIFY)
 * costs one idle poll of the workers (1 s), as does a job inserted by plain SQL from another
 * program: nothing announces those.
 */

import type pg from 'pg';
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from '#kysely';
import type { Logger } from '../../logger.js';
import { heedLostSessions } from '../lost-sessions.js';
import { pgDriver } from '../pg-driver.js';
import { withWrappedDriver } from './wrapped-driver.js';

/** The channel workers LISTEN on. */
export const JOBS_CHANNEL = 'wsops_jobs';

/** A statement that inserts delivery jobs, alone or at the end of a WITH (Kysely's and raw SQL alike). */
const WRITES_JOBS = /insert into "?delivery_jobs"?[\s(]/i;

/**
 * Sends `NOTIFY wsops_jobs`, at most one at a time: a call while one is in flight sends one more
 * after it (a worker woken by the first may have claimed before the later commits), so a burst
 * of commits costs two notifications, not one each.
 */
export class JobAnnouncer {
  private pool: pg.Pool | undefined;
  private sending: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly logger: Logger | undefined,
  ) {}

  announce(): void {
    if (this.closed) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = this.send();
  }

  private async send(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.session().query(`NOTIFY ${JOBS_CHANNEL}`);
      } while (this.again && !this.closed);
    } catch (err) {
      // The workers find the jobs at their next poll; a lost database is reported by its pools.
      this.logger?.debug({ err: err instanceof Error ? err.message : String(err) }, 'job announcement lost; workers poll for it');
    } finally {
      this.sending = undefined;
    }
  }

  /** Opened at the first announcement: a process that writes no jobs never opens it. */
  private session(): pg.Pool {
    if (!this.pool) {
      this.pool = new (pgDriver().Pool)({
        connectionString: this.url,
        max: 1,
        application_name: 'wsops-announce',
        options: '-c synchronous_commit=off',
      });
      heedLostSessions(this.pool, this.logger);
    }
    return this.pool;
  }

  /** Sends what is pending, then closes the session. */
  async close(): Promise<void> {
    await this.sending;
    this.closed = true;
    await this.pool?.end();
  }
}

/** `dialect` whose transactions announce the delivery jobs they inserted once they commit. */
export function announcingDialect(dialect: Dialect, announcer: JobAnnouncer): Dialect {
  return withWrappedDriver(dialect, (driver) => new AnnouncingDriver(driver, announcer));
}

/** A connection of the driver below, and whether its open transaction inserted jobs. */
class Watched implements DatabaseConnection {
  inTransaction = false;
  wroteJobs = false;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly announcer: JobAnnouncer,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.inner.executeQuery<R>(query);
    if (WRITES_JOBS.test(query.sql)) {
      // Outside a transaction the statement has committed already.
      if (this.inTransaction) this.wroteJobs = true;
      else this.announcer.announce();
    }
    return result;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }

  /** The transaction ended: announce what it committed. */
  ended(committed: boolean): void {
    if (committed && this.wroteJobs) this.announcer.announce();
    this.inTransaction = false;
    this.wroteJobs = false;
  }
}

class AnnouncingDriver implements Driver {
  private readonly watched = new WeakMap<DatabaseConnection, Watched>();

  constructor(
    private readonly driver: Driver,
    private readonly announcer: JobAnnouncer,
  ) {}

  init(): Promise<void> {
    return this.driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await this.driver.acquireConnection();
    let connection = this.watched.get(inner);
    if (!connection) {
      connection = new Watched(inner, this.announcer);
      this.watched.set(inner, connection);
    }
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = connection as Watched;
    await this.driver.beginTransaction(c.inner, settings);
    c.inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as Watched;
    try {
      await this.driver.commitTransaction(c.inner);
    } catch (err) {
      c.ended(false);
      throw err;
    }
    c.ended(true);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const c = connection as Watched;
    c.ended(false);
    await this.driver.rollbackTransaction(c.inner);
  }

  async savepoint(connection: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    await this.driver.savepoint?.((connection as Watched).inner, name, compile);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<NonNullable<Driver['rollbackToSavepoint']>>[2],
  ): Promise<void> {
    await this.driver.rollbackToSavepoint?.((connection as Watched).inner, name, compile);
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: Parameters<NonNullable<Driver['releaseSavepoint']>>[2],
  ): Promise<void> {
    await this.driver.releaseSavepoint?.((connection as Watched).inner, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection((connection as Watched).inner);
  }

  destroy(): Promise<void> {
    return this.driver.destroy();
  }
}
