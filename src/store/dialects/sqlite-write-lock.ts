/**
 * Waiting for SQLite's write lock off the event loop (ADR 42, sixth pass). Every transaction of
 * the writer connection begins with BEGIN IMMEDIATE, not Kysely's plain (deferred) BEGIN: a
 * deferred transaction that reads first and writes later fails with SQLITE_BUSY_SNAPSHOT when
 * another process (an API process beside a worker) committed in between, which no wait can
 * help; IMMEDIATE takes the write lock up front, so writers queue instead.
 *
 * While another process holds the lock, SQLite's busy handler sleeps on the main thread, in
 * steps growing to 100 ms, and every request of the process waits with it; meanwhile the holder
 * takes the lock again between those sleeps, and the other's waits grew to seconds. Here BEGIN
 * IMMEDIATE is tried without SQLite's wait and, while another connection holds the lock, again
 * every millisecond on a timer, for as long as busy_timeout would have waited.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type SQLite from 'better-sqlite3';
import type { DatabaseConnection, Dialect, Driver } from '#kysely';
import { preparedStatement } from './sqlite-prepared.js';
import { withWrappedDriver } from './wrapped-driver.js';

/** How long a statement waits for a lock another connection holds (PRAGMA busy_timeout), and BEGIN for the write lock. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * Whether `err` is SQLite's "another connection holds the lock", or one of its extended forms
 * (SQLITE_BUSY_RECOVERY: another connection is rebuilding the WAL index), which SQLite's own busy
 * handler would have waited out too.
 */
const isBusy = (err: unknown) => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
};

/** `dialect` (on the connection `raw`) whose transactions wait for the write lock on a timer. */
export function lockWaitingDialect(dialect: Dialect, raw: SQLite.Database): Dialect {
  return withWrappedDriver(dialect, (driver) => new LockWaitingDriver(driver, raw));
}

class LockWaitingDriver implements Driver {
  constructor(
    private readonly driver: Driver,
    private readonly raw: SQLite.Database,
  ) {}

  /** BEGIN IMMEDIATE without SQLite's busy wait: undefined once begun, SQLite's error while another connection holds the write lock. */
  private tryBegin(): unknown {
    this.raw.exec('PRAGMA busy_timeout = 0');
    try {
      preparedStatement(this.raw, 'BEGIN IMMEDIATE').run();
      return undefined;
    } catch (err) {
      if (isBusy(err)) return err;
      throw err;
    } finally {
      this.raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  async beginTransaction(): Promise<void> {
    const deadline = performance.now() + BUSY_TIMEOUT_MS;
    for (;;) {
      const busy = this.tryBegin();
      if (busy === undefined) return;
      if (performance.now() >= deadline) throw busy;
      await sleep(1);
    }
  }

  init(): Promise<void> {
    return this.driver.init();
  }
  acquireConnection(): Promise<DatabaseConnection> {
    return this.driver.acquireConnection();
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.commitTransaction(connection);
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.driver.rollbackTransaction(connection);
  }
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection(connection);
  }
  destroy(): Promise<void> {
    return this.driver.destroy();
  }
}
