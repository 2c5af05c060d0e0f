/**
 * What differs between SQLite and PostgreSQL, behind one interface with one implementation per
 * dialect (sqlite.ts and sqlite-reads.ts, postgres.ts and postgres-reads.ts; Kysely's
 * `src/dialect/<name>/` is the model). The dialect is chosen once, from the database URL, when
 * the database is opened (index.ts); code above the store asks the `Engine` of its database
 * instead of testing which database it is.
 *
 * Left outside (ADR 34): the migrations' DDL (a migration is given its dialect and its history
 * must not move with the adapter). The webhook delivery queue's statements are inside: the
 * last block of `Adapter` (ADR 35).
 */
import type SQLite from 'better-sqlite3';
import type { Insertable, Kysely, RawBuilder } from '#kysely';
import type { Logger } from '../../logger.js';
import type { ListQuery, PageRows } from '../page-queries.js';
import type { RecordBatch } from '../record-batches.js';
import type { DB, DeliveryAttemptsTable, RecordsTable } from '../schema.js';
import type { StorageHealth } from '../storage-faults.js';
import type { DocFields } from './doc-fields.js';

export type Dialect = 'sqlite' | 'postgres';

export interface OpenOptions {
  /** SQLite: megabytes of the file the read connection maps (WSOPS_SQLITE_MMAP_MB). */
  sqliteMmapMb?: number;
}

/** How the key cache learns that what authentication reads has changed (ADR 14). */
export interface AuthChanges {
  /** Whether the cache may be used for this request; resolves once changes committed before it are applied. */
  trusted(): Promise<boolean>;
  close?(): Promise<void>;
}

/** A bound value of a hot query; arrays only on PostgreSQL (a batch of pages). */
export type HotValue = string | number | null | readonly string[];

/**
 * The few queries on every API request (key lookup, detail, list page) skip the query builder:
 * their SQL is fixed text per query shape, written with `?` placeholders, prepared once and run
 * with positional parameters on committed data, rows returned as arrays (columns in SELECT
 * order). SQLite: a statement per text on the read connection. PostgreSQL: a named
 * (server-side prepared) statement with `$n`.
 */
export interface HotQueries {
  rows(sqlText: string, params: readonly HotValue[]): Promise<unknown[][]>;
}

/**
 * How a page read ahead is known to be current when its request comes (read-ahead.ts).
 * `data-version`: a number that moves with every commit, read synchronously before the page
 * (SQLite). `snapshot`: the current snapshot, one round trip, compared with the one the page was
 * read in (PostgreSQL 13+).
 */
export type Currency =
  | { kind: 'data-version'; read: () => number }
  | {
      kind: 'snapshot';
      read: () => Promise<string>;
      /** False once the server showed it cannot tell its snapshot (PostgreSQL before 13): nothing is read ahead from then on. */
      usable?: () => boolean;
    };

/** The list pages of one API process (page-queries.ts has what both dialects share). */
export interface Pages {
  /** One page in (updated_at, id) order, with its filters, search, `updated_since` and position. */
  listPage(q: ListQuery): Promise<PageRows>;
  /** How read-ahead tells a page is still current; none (an in-memory SQLite database): nothing is read ahead. */
  readonly currency: Currency | undefined;
  close(): Promise<void>;
}

/**
 * The dialect's SQL, bound to no connection (Kysely's adapter): usable where only the dialect's
 * name is at hand (`adapterOf` in index.ts).
 */
/** A table as the copy plans it: its primary key and the tables it names (Adapter.tableKeys). */
export interface TableKeys {
  table: string;
  primaryKey: string[];
  parents: string[];
}

export interface Adapter extends DocFields {
  readonly name: Dialect;
  /**
   * Lines an import applies per transaction (each well inside the sync overlap). SQLite has one
   * write lock for the whole file: while a batch holds it every other writer waits, the delivery
   * worker's claims included, so its batches are short. PostgreSQL locks rows only, and a short
   * batch costs it rate (ADR 36).
   */
  readonly importBatchLines: number;
  /**
   * Records an export reads per page. SQLite's reads run on the event loop, and other requests
   * wait for a whole page: small pages. PostgreSQL's leave it while the database reads: a small
   * page only costs round trips (ADR 36, seventh pass).
   */
  readonly exportPageRows: number;
  /**
   * People a SCIM list whose filter no index serves reads per query (src/scim/directory.ts), in
   * the short rows of scim_people_fields. SQLite's reads run on the event loop: slices of about a
   * millisecond, a turn between them, so other requests wait for a slice, not for the scan.
   * PostgreSQL's run in the database while the loop serves others: null, one count and one page
   * query, which the planner runs as scans of the table rather than walks of its key in slices.
   */
  readonly scanSliceRows: number | null;
  /**
   * The placeholder of a LIMIT in a prepared hot query. SQLite's planner looks into a bare
   * `LIMIT ?`, so binding it would expire the statement every run (sqlite-reads.ts); PostgreSQL
   * takes the plain one.
   */
  readonly limitPlaceholder: string;
  /** A SELECT that locks the rows it reads until the transaction ends (SQLite: already locked, every write transaction holds the database's write lock, BEGIN IMMEDIATE). */
  lockRows<Q extends { forUpdate(): Q }>(query: Q): Q;
  /**
   * Runs `fn` in a transaction whose plans read in index order whatever the statistics say.
   * PostgreSQL, right after a burst (no ANALYZE yet), chooses a bitmap scan of a whole history
   * and a sort, growing with the history where index order reads one page (ADR 6): sorts and bitmap
   * scans are priced out for the transaction, and JIT off (that price alone would compile the
   * statement). SQLite's planner follows the index it is given: `fn` runs as it is.
   */
  inIndexOrder<T>(db: Kysely<DB>, fn: (db: Kysely<DB>) => Promise<T>): Promise<T>;
  /**
   * Opens a read transaction on `conn` that sees one consistent snapshot and blocks no writer.
   * SQLite: a deferred transaction (a WAL snapshot; the driver turns a bare BEGIN into BEGIN
   * IMMEDIATE, which would block writers). PostgreSQL: repeatable read, read only.
   */
  beginSnapshot(conn: Kysely<DB>): Promise<void>;
  /**
   * After rows with explicit ids were written into `tables`: PostgreSQL's serial sequences do
   * not move by themselves, so the next insert would collide; SQLite's AUTOINCREMENT does.
   */
  afterExplicitIds(db: Kysely<DB>, tables: ReadonlySet<string>): Promise<void>;
  /**
   * Each table of the database with its primary key's columns, in the key's order, and the tables
   * its foreign keys name: what `wsops copy` derives its plan from (store/copy.ts).
   */
  tableKeys(db: Kysely<DB>): Promise<TableKeys[]>;
  /**
   * Creates the triggers that announce, in the writing transaction, every change to the columns
   * key authentication reads (ADR 14, migration 0014; auth-change-triggers.ts names them).
   * SQLite: they move the one-row `auth_version` stamp. PostgreSQL: they NOTIFY the auth channel
   * with what changed (`key:<id>`, `workspace:<id>`, `*`).
   */
  createAuthChangeSignals(db: Kysely<unknown>): Promise<void>;
  /** Replaces the api_keys update trigger so that it watches `columns` (migration 0018). */
  watchKeyColumns(db: Kysely<unknown>, columns: readonly string[]): Promise<void>;

  // The webhook delivery queue's statements that differ by dialect (src/webhooks/queue/queue.ts says
  // what they do; sqlite-queue.ts and postgres-queue.ts how).
  /** Whether committed jobs are announced (PostgreSQL: NOTIFY after the writer's commit, postgres-jobs.ts): an idle worker may then poll rarely. */
  readonly announcesJobs: boolean;
  /**
   * `webhook_endpoints e` beside each endpoint's oldest due jobs, as `d` (id, endpoint_id,
   * created_at), each endpoint's range read through its own index range.
   */
  dueHeads(oldestDue: OldestDue): RawBuilder<unknown>;
  /**
   * In one transaction, serialized with every other claim: sets `claim.set` on the jobs
   * `claim.due` selects, reads them as `claim.columns` (jobs as `c`, with `claim.joins`), and
   * passes the rows to `after` before the transaction commits.
   */
  claimJobs<R>(db: Kysely<DB>, claim: JobClaim, after: (trx: Kysely<DB>, rows: R[]) => Promise<void>): Promise<R[]>;
  /**
   * Completes the jobs still held by `token` and writes the attempts of those jobs (the others'
   * are dropped), inside `trx`. Returns the ids of the jobs completed.
   */
  recordOutcomes(
    trx: Kysely<DB>,
    token: string,
    completions: readonly JobCompletion[],
    attempts: readonly DeliveryAttemptsTable[],
    nowIso: string,
  ): Promise<Set<string>>;
}

/** The adapter and what needs the database's own connections: chosen once, when it is opened. */
export interface Engine extends Adapter {
  /** The hot queries of this database, on committed data. */
  readonly hot: HotQueries;
  /**
   * The list pages of an API process (ADR 15, 18, 19), and how read-ahead tells a page is still
   * current (ADR 17). PostgreSQL opens sessions of its own for them on first use (closed by
   * `Pages.close`); SQLite reads them on the read connection.
   */
  openPages(logger: Logger): Pages;
  /**
   * Rows of one query of committed data, on the read connection where there is one (metrics,
   * the delivery backlog): SQL text, or Kysely's `sql` template when it has parameters (each
   * dialect compiles its own placeholders). SQLite's read connection never queues behind a writer.
   */
  readCommitted<R>(query: string | RawBuilder<R>): Promise<R[]>;
  /**
   * Writes pages of rows as they are (explicit ids included) into `table`, each page in one
   * transaction (`wsops copy`, the seed). SQLite: one prepared single-row insert per row, and
   * for `records` the page's search words indexed in one statement after its inserts.
   * PostgreSQL: one statement per page that unnests one array per column, typed as the
   * target's columns.
   */
  rowWriter(table: keyof DB & string): Promise<(rows: Record<string, unknown>[]) => Promise<void>>;
  /** How the key cache of this database learns of changes to keys and workspaces (ADR 14). */
  authChanges(invalidate: (what: string) => void, logger: Logger): AuthChanges;
  /**
   * The statements of one domain action of `workspaceId`, run in its transaction `trx`
   * (src/actions/domain/run.ts): fixed texts prepared once per connection, so an action builds no
   * query (ADR 42). SQLite: statements of the writer connection, which `trx` holds. PostgreSQL:
   * named statements, parsed once per session.
   */
  actionStatements(trx: Kysely<DB>, workspaceId: string): ActionStatements;
  /**
   * Runs `fn` in one write transaction with the statements of a system-of-record write
   * (record-batches.ts). SQLite: BEGIN IMMEDIATE, so writers queue rather than fail, and the
   * statements run raw on the writer connection the transaction holds. PostgreSQL: statements
   * of the transaction, the current rows locked in id order.
   */
  writeRecords<T>(fn: (batch: RecordBatch) => Promise<T>): Promise<T>;
}

/** An open database: the query builder, its dialect's engine, and SQLite's raw handles. */
export interface Database {
  db: Kysely<DB>;
  /** What the delivery loop claims and records on: PostgreSQL, a pool of its own (ADR 42); SQLite, `db`. */
  deliveries: Kysely<DB>;
  /** The dialect's name, for what only needs to say it (logs, tests); behaviour goes through `engine`. */
  dialect: Dialect;
  engine: Engine;
  /** The raw better-sqlite3 writer handle (SQLite only). */
  sqlite?: SQLite.Database;
  /**
   * A second, read-only SQLite connection for the hot read queries. It sees committed data
   * only: a read on the writer connection would run inside whatever transaction that
   * connection has open between two awaits (a domain action, say) and could see its
   * uncommitted writes.
   */
  sqliteReader?: SQLite.Database;
  /** Whether its record writes are failing for a full disk or a lost connection (readiness). */
  storage: StorageHealth;
  close(): Promise<void>;
}

/**
 * What a domain action reads and writes. Every read locks what it returns until the transaction
 * ends (PostgreSQL; on SQLite the transaction holds the database's write lock): two actions that
 * read one record run one after the other (ADR 42).
 */
export interface ActionStatements {
  /** The stored JSON of a record, locked for update, or shared (others may check it too, none change it). */
  record(register: string, id: string, lock: 'update' | 'share'): Promise<string | undefined>;
  /**
   * The stored JSON of the records, locked for update, whose ids carry `idPrefix` and that name
   * `target` by a reference field (the reverse index of references, ADR 43), in `statuses` (any
   * when null).
   */
  naming(idPrefix: string, target: string, statuses: readonly string[] | null): Promise<string[]>;
  /**
   * The stored JSON of the records of `register`, locked for update, in `statuses` (any when
   * null), whose JSON contains `mention` (when given; `_` and `%` match as LIKE does).
   */
  matching(register: string, statuses: readonly string[] | null, mention: string | null): Promise<string[]>;
  /**
   * The workspace's modules beside each of its active endpoints (the module check and the
   * fan-out): one row per endpoint, or one with a null endpoint when it has none; no row: no such
   * workspace.
   */
  workspace(): Promise<WorkspaceEndpointRow[]>;
  /** Writes a record's row (insert or replace). `locked`: read under lock in this transaction, so it has no tombstone to remove. */
  put(row: RecordsTable, locked: boolean): Promise<void>;
  /** Writes the action's audit entry, its events and their delivery jobs (one statement on PostgreSQL). */
  append(audit: Insertable<DB['audit_events']>, events: readonly DB['events'][], jobs: readonly DB['delivery_jobs'][]): Promise<void>;
}

/** A row of ActionStatements.workspace: the workspace's modules, and one receiving endpoint (event-receivers.ts) or nulls. */
export interface WorkspaceEndpointRow {
  modules: string;
  id: string | null;
  events: string | null;
  scopes: string | null;
  /** 1: the endpoint's jobs are written held (event-receivers.ts). */
  held: number | null;
  /** The endpoint's content filter as stored (webhooks/events/event-filter.ts); null: none. */
  filter: string | null;
}

/** The delivery queue's shapes the dialects' statements take (Adapter's last block). */
export type OldestDue = (columns: RawBuilder<unknown>, jobs: RawBuilder<unknown>, lock: RawBuilder<unknown>) => RawBuilder<unknown>;

export interface JobClaim {
  /** The ids of the jobs to claim (a SELECT). */
  due: RawBuilder<unknown>;
  /** The SET list that claims a job. */
  set: RawBuilder<unknown>;
  /** The job columns an attempt needs, read from the claimed row itself. */
  jobColumns: readonly string[];
  /** `SELECT …` of the claimed rows, jobs as `c`. */
  columns: RawBuilder<unknown>;
  /** The joins `columns` reads through. */
  joins: RawBuilder<unknown>;
}

export interface JobCompletion {
  id: string;
  state: 'pending' | 'succeeded' | 'exhausted';
  attempts: number;
  /** When the next attempt is due (null once the job is finished). */
  nextAttemptAt: string | null;
}
