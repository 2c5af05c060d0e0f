import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import { createAuthChangeSignals } from './auth-change-triggers.js';
import type { Database, Dialect } from './database.js';
import { MAX_WORD_LENGTH, PG_SEARCH_VECTOR } from './search-text.js';

/**
 * The records indexes: the paging and sync order is (updated_at, id), so every list query is a
 * range scan over one of them, whatever the depth. Created by 0001, again by 0015's rebuild.
 */
async function createRecordIndexes(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('records_order').on('records').columns(['workspace_id', 'register', 'updated_at', 'id']).execute();
  for (const col of ['location_id', 'status', 'category', 'record_type']) {
    await db.schema
      .createIndex(`records_by_${col}`)
      .on('records')
      .columns(['workspace_id', 'register', col, 'updated_at', 'id'])
      .where(sql.ref(col), 'is not', null)
      .execute();
  }
}

/** SQLite: the triggers that keep the external-content FTS5 index in step with records. */
async function createFtsTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TRIGGER records_ai AFTER INSERT ON records BEGIN
    INSERT INTO records_fts(rowid, search_text) VALUES (new.rowid, new.search_text); END`.execute(db);
  await sql`CREATE TRIGGER records_ad AFTER DELETE ON records BEGIN
    INSERT INTO records_fts(records_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text); END`.execute(db);
  await sql`CREATE TRIGGER records_au AFTER UPDATE OF search_text ON records BEGIN
    INSERT INTO records_fts(records_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
    INSERT INTO records_fts(rowid, search_text) VALUES (new.rowid, new.search_text); END`.execute(db);
}

function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001_core': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('settings')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('value', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('workspaces')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('modules', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('api_keys')
          .addColumn('key_id', 'text', (c) => c.primaryKey())
          .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('environment', 'text', (c) => c.notNull())
          .addColumn('secret_hash', 'text', (c) => c.notNull())
          .addColumn('scopes', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'text', (c) => c.notNull())
          .addColumn('revoked_at', 'text')
          .addColumn('last_used_at', 'text')
          .addColumn('created_by', 'text')
          .execute();
        await db.schema.createIndex('api_keys_workspace').on('api_keys').columns(['workspace_id']).execute();
        await db.schema
          .createTable('audit_events')
          .addColumn('seq', dialect === 'sqlite' ? 'integer' : 'bigserial', (c) =>
            dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
          )
          .addColumn('id', 'text', (c) => c.notNull().unique())
          .addColumn('workspace_id', 'text', (c) => c.notNull())
          .addColumn('at', 'text', (c) => c.notNull())
          .addColumn('actor', 'text', (c) => c.notNull())
          .addColumn('action', 'text', (c) => c.notNull())
          .addColumn('key_id', 'text')
          .addColumn('target', 'text')
          .addColumn('detail', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('audit_events_workspace').on('audit_events').columns(['workspace_id', 'seq']).execute();
        await db.schema
          .createTable('records')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('workspace_id', 'text', (c) => c.notNull())
          .addColumn('register', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addColumn('location_id', 'text')
          .addColumn('status', 'text')
          .addColumn('category', 'text')
          .addColumn('record_type', 'text')
          .addColumn('search_text', 'text', (c) => c.notNull())
          .addColumn('doc', 'text', (c) => c.notNull())
          .execute();
        await createRecordIndexes(db);
        if (dialect === 'sqlite') {
          // External-content FTS5 index over search_text, kept in step by triggers.
          await sql`CREATE VIRTUAL TABLE records_fts USING fts5(search_text, content='records', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`.execute(
            db,
          );
          await createFtsTriggers(db);
        } else {
          await sql`CREATE INDEX records_search ON records USING gin (to_tsvector('simple', search_text))`.execute(db);
        }
      },
    },
    '0002_webhooks': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('webhook_endpoints')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('scopes', 'text', (c) => c.notNull())
          .addColumn('events', 'text', (c) => c.notNull())
          .addColumn('status', 'text', (c) => c.notNull())
          .addColumn('disabled_reason', 'text')
          .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
          .addColumn('previous_secret_ciphertext', 'text')
          .addColumn('previous_secret_expires_at', 'text')
          .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('last_failure', 'text')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addColumn('verified_at', 'text')
          .addColumn('disabled_at', 'text')
          .execute();
        await db.schema.createIndex('webhook_endpoints_workspace').on('webhook_endpoints').columns(['workspace_id', 'status']).execute();
        await db.schema
          .createTable('events')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('workspace_id', 'text', (c) => c.notNull())
          .addColumn('type', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('body', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('events_workspace').on('events').columns(['workspace_id', 'created_at']).execute();
        await db.schema
          .createTable('delivery_jobs')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('workspace_id', 'text', (c) => c.notNull())
          .addColumn('event_id', 'text', (c) => c.notNull())
          .addColumn('endpoint_id', 'text', (c) => c.notNull())
          .addColumn('event_type', 'text', (c) => c.notNull())
          .addColumn('state', 'text', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('next_attempt_at', 'text')
          .addColumn('lease_until', 'text')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .execute();
        // The queue: due pending jobs in run-time order. Deliberately the only index beside the
        // primary key: the claim must always walk it in order, and a second index on
        // endpoint_id would tempt the planner (with stale statistics) into reading every
        // pending job of an endpoint and sorting them.
        await db.schema.createIndex('delivery_jobs_due').on('delivery_jobs').columns(['state', 'next_attempt_at']).execute();
        await db.schema
          .createTable('delivery_attempts')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('job_id', 'text', (c) => c.notNull())
          .addColumn('workspace_id', 'text', (c) => c.notNull())
          .addColumn('event_id', 'text', (c) => c.notNull())
          .addColumn('event_type', 'text', (c) => c.notNull())
          .addColumn('endpoint_id', 'text', (c) => c.notNull())
          .addColumn('attempt', 'integer', (c) => c.notNull())
          .addColumn('attempted_at', 'text', (c) => c.notNull())
          .addColumn('status_code', 'integer')
          .addColumn('outcome', 'text', (c) => c.notNull())
          .addColumn('error_class', 'text')
          .addColumn('latency_ms', 'integer', (c) => c.notNull())
          .addColumn('response_body', 'text')
          .addColumn('next_attempt_at', 'text')
          .execute();
        await db.schema
          .createIndex('delivery_attempts_workspace')
          .on('delivery_attempts')
          .columns(['workspace_id', 'attempted_at'])
          .execute();
        await db.schema.createIndex('delivery_attempts_job').on('delivery_attempts').columns(['job_id']).execute();
        await db.schema
          .createIndex('delivery_attempts_endpoint')
          .on('delivery_attempts')
          .columns(['endpoint_id', 'attempted_at'])
          .execute();
        await db.schema
          .createTable('renewal_notices')
          .addColumn('workspace_id', 'text', (c) => c.notNull())
          .addColumn('vendor_id', 'text', (c) => c.notNull())
          .addColumn('renewal_date', 'text', (c) => c.notNull())
          .addColumn('event_id', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint('renewal_notices_pk', ['workspace_id', 'vendor_id', 'renewal_date'])
          .execute();
      },
    },
    '0003_job_notifications': {
      async up(db: Kysely<unknown>) {
        // PostgreSQL tells idle delivery workers when jobs are committed (LISTEN wsops_jobs), so
        // they can poll rarely when idle and still start within milliseconds. NOTIFY is sent at
        // commit, once per transaction. SQLite workers poll (a local query costs microseconds).
        if (dialect !== 'postgres') return;
        await sql`CREATE FUNCTION wsops_notify_jobs() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM pg_notify('wsops_jobs', ''); RETURN NULL; END $$`.execute(db);
        await sql`CREATE TRIGGER delivery_jobs_notify AFTER INSERT ON delivery_jobs
          FOR EACH STATEMENT EXECUTE FUNCTION wsops_notify_jobs()`.execute(db);
      },
    },
    '0004_search_words': {
      async up(db: Kysely<unknown>) {
        // One word rule for both dialects (src/store/search-text.ts): search_text already holds
        // the words; the databases must not split them again by rules of their own.
        if (dialect === 'sqlite') {
          await sql`DROP TABLE records_fts`.execute(db);
          // `ascii`: splits on ASCII space and punctuation only, every other character is part
          // of a word, so the stored words are the tokens, whatever the Unicode version.
          await sql`CREATE VIRTUAL TABLE records_fts USING fts5(search_text, content='records', content_rowid='rowid', tokenize='ascii')`.execute(
            db,
          );
          await sql`INSERT INTO records_fts(records_fts) VALUES ('rebuild')`.execute(db);
        } else {
          await sql`DROP INDEX IF EXISTS records_search`.execute(db);
          // Words stored before the length bound was applied: cut them as searchWords does.
          await sql`UPDATE records SET search_text = (
              SELECT string_agg(left(w, ${sql.lit(MAX_WORD_LENGTH)}), ' ' ORDER BY n)
              FROM unnest(string_to_array(search_text, ' ')) WITH ORDINALITY AS t(w, n))
            WHERE search_text ~ ${sql.lit(`[^ ]{${MAX_WORD_LENGTH + 1}}`)}`.execute(db);
          await sql`CREATE INDEX records_search ON records USING gin (${sql.raw(PG_SEARCH_VECTOR)})`.execute(db);
        }
      },
    },
    '0005_job_lease_owner': {
      async up(db: Kysely<unknown>) {
        // The claim that holds a job's lease (one token per claimed batch). A worker records an
        // outcome only where the job still carries its token, so a worker whose lease expired
        // (and whose job another worker re-claimed) cannot overwrite the newer attempt's result.
        await db.schema.alterTable('delivery_jobs').addColumn('locked_by', 'text').execute();
      },
    },
    '0010_console_admins': {
      async up(db: Kysely<unknown>) {
        // Console admins. An address is an active admin of one workspace only (sign-in is email
        // and password, no workspace picker); removed admins keep their row for the audit trail.
        await db.schema
          .createTable('console_admins')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
          .addColumn('email', 'text', (c) => c.notNull())
          .addColumn('password_hash', 'text')
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('created_by', 'text', (c) => c.notNull())
          .addColumn('removed_at', 'text')
          .addColumn('last_sign_in_at', 'text')
          .execute();
        await db.schema
          .createIndex('console_admins_active_email')
          .on('console_admins')
          .column('email')
          .unique()
          .where(sql.ref('removed_at'), 'is', null)
          .execute();
        await db.schema.createIndex('console_admins_workspace').on('console_admins').columns(['workspace_id']).execute();
        // One-time links and sessions: only SHA-256 hashes of their tokens are stored.
        await db.schema
          .createTable('console_sign_in_links')
          .addColumn('token_hash', 'text', (c) => c.primaryKey())
          .addColumn('admin_id', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('expires_at', 'text', (c) => c.notNull())
          .addColumn('used_at', 'text')
          .execute();
        await db.schema.createIndex('console_sign_in_links_admin').on('console_sign_in_links').columns(['admin_id']).execute();
        await db.schema
          .createTable('console_sessions')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('admin_id', 'text', (c) => c.notNull())
          .addColumn('csrf_token', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('last_seen_at', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('console_sessions_admin').on('console_sessions').columns(['admin_id']).execute();
      },
    },
    '0011_delivery_history': {
      async up(db: Kysely<unknown>) {
        // The console's per-endpoint delivery history, keyset-paged on (created_at, id) newest
        // first: created_at never changes, so a job retried while someone pages never moves
        // between pages. One index per filter (none, outcome = state, event type). The claim
        // still walks delivery_jobs_due in order: it runs with enable_sort off on PostgreSQL
        // (ADR 6), so these indexes cannot lure it into an endpoint scan plus a sort.
        await db.schema
          .createIndex('delivery_jobs_endpoint_history')
          .on('delivery_jobs')
          .columns(['endpoint_id', 'created_at', 'id'])
          .execute();
        await db.schema
          .createIndex('delivery_jobs_endpoint_state')
          .on('delivery_jobs')
          .columns(['endpoint_id', 'state', 'created_at', 'id'])
          .execute();
        await db.schema
          .createIndex('delivery_jobs_endpoint_type')
          .on('delivery_jobs')
          .columns(['endpoint_id', 'event_type', 'created_at', 'id'])
          .execute();
        // The 24 h / 7 d chart reads only this index (an index-only scan on PostgreSQL): time
        // range of one endpoint, outcome and latency. It replaces the narrower endpoint index.
        await db.schema
          .createIndex('delivery_attempts_endpoint_stats')
          .on('delivery_attempts')
          .columns(['endpoint_id', 'attempted_at', 'outcome', 'latency_ms'])
          .execute();
        await db.schema.dropIndex('delivery_attempts_endpoint').execute();
      },
    },
    '0012_usage_and_audit': {
      async up(db: Kysely<unknown>) {
        // API requests per key and hour, summed by every API process (src/store/usage.ts).
        await db.schema
          .createTable('api_usage')
          .addColumn('workspace_id', 'text', (c) => c.notNull())
          .addColumn('hour', 'text', (c) => c.notNull())
          .addColumn('key_id', 'text', (c) => c.notNull())
          .addColumn('requests', 'integer', (c) => c.notNull())
          .addPrimaryKeyConstraint('api_usage_pk', ['workspace_id', 'hour', 'key_id'])
          .execute();
        await db.schema.createIndex('api_usage_hour').on('api_usage').columns(['hour']).execute();
        // The audit trail is filtered by kind (the action's prefix) and by actor, and paged by
        // seq: one index per filter keeps each page a range scan, however long the trail.
        await db.schema.alterTable('audit_events').addColumn('kind', 'text').execute();
        await db.schema.alterTable('audit_events').addColumn('actor_kind', 'text').execute();
        const prefix =
          dialect === 'sqlite'
            ? sql`CASE WHEN instr(action, '.') > 0 THEN substr(action, 1, instr(action, '.') - 1) ELSE action END`
            : sql`split_part(action, '.', 1)`;
        await sql`UPDATE audit_events SET kind = ${prefix}, actor_kind = CASE
          WHEN actor IN ('cli', 'operator') THEN 'operator'
          WHEN actor LIKE 'console:%' THEN 'console'
          WHEN actor LIKE 'key:%' THEN 'key'
          ELSE actor END`.execute(db);
        await sql`UPDATE audit_events SET kind = 'delivery' WHERE kind = 'deliveries'`.execute(db);
        await db.schema.createIndex('audit_events_kind').on('audit_events').columns(['workspace_id', 'kind', 'seq']).execute();
        await db.schema.createIndex('audit_events_actor_kind').on('audit_events').columns(['workspace_id', 'actor_kind', 'seq']).execute();
        await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['workspace_id', 'actor', 'seq']).execute();
      },
    },
    '0013_console_speed': {
      async up(db: Kysely<unknown>) {
        // The 24 h / 7 d chart and the Overview's success rate read every attempt of the window
        // (500,000 rows for 7 days of a busy endpoint: 1.5 s on SQLite). This rollup holds one
        // row per endpoint, hour and distinct latency, so the chart reads at most 168 hours ×
        // the endpoint's latency spread, however many attempts were made, and the median stays
        // exact (the lower middle of the latencies, found from cumulative counts).
        await db.schema
          .createTable('delivery_attempt_hours')
          .addColumn('endpoint_id', 'text', (c) => c.notNull())
          .addColumn('hour', 'text', (c) => c.notNull())
          .addColumn('latency_ms', 'integer', (c) => c.notNull())
          .addColumn('attempts', 'integer', (c) => c.notNull())
          .addColumn('succeeded', 'integer', (c) => c.notNull())
          .addPrimaryKeyConstraint('delivery_attempt_hours_pk', ['endpoint_id', 'hour', 'latency_ms'])
          .execute();
        // Kept by the database on every insert of an attempt, in the inserting transaction (the
        // dispatcher's bookkeeping), whoever writes them. PostgreSQL: once per statement over
        // the inserted rows (the dispatcher inserts a batch in one statement), keys in order so
        // two concurrent batches lock shared rows in the same order. SQLite: a row trigger
        // (in-process, microseconds).
        if (dialect === 'postgres') {
          await sql`CREATE FUNCTION wsops_delivery_attempt_hours() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              INSERT INTO delivery_attempt_hours (endpoint_id, hour, latency_ms, attempts, succeeded)
              SELECT endpoint_id, substr(attempted_at, 1, 13), latency_ms, count(*), count(*) FILTER (WHERE outcome = 'succeeded')
              FROM new_attempts GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
              ON CONFLICT (endpoint_id, hour, latency_ms) DO UPDATE SET
                attempts = delivery_attempt_hours.attempts + excluded.attempts,
                succeeded = delivery_attempt_hours.succeeded + excluded.succeeded;
              RETURN NULL;
            END $$`.execute(db);
          await sql`CREATE TRIGGER delivery_attempts_hours AFTER INSERT ON delivery_attempts
            REFERENCING NEW TABLE AS new_attempts FOR EACH STATEMENT EXECUTE FUNCTION wsops_delivery_attempt_hours()`.execute(db);
        } else {
          await sql`CREATE TRIGGER delivery_attempts_hours AFTER INSERT ON delivery_attempts BEGIN
              INSERT INTO delivery_attempt_hours (endpoint_id, hour, latency_ms, attempts, succeeded)
              VALUES (NEW.endpoint_id, substr(NEW.attempted_at, 1, 13), NEW.latency_ms, 1, NEW.outcome = 'succeeded')
              ON CONFLICT (endpoint_id, hour, latency_ms) DO UPDATE SET
                attempts = attempts + 1, succeeded = succeeded + excluded.succeeded;
            END`.execute(db);
        }
        await sql`INSERT INTO delivery_attempt_hours (endpoint_id, hour, latency_ms, attempts, succeeded)
          SELECT endpoint_id, substr(attempted_at, 1, 13), latency_ms, count(*), sum(CASE WHEN outcome = 'succeeded' THEN 1 ELSE 0 END)
          FROM delivery_attempts GROUP BY endpoint_id, substr(attempted_at, 1, 13), latency_ms`.execute(db);
      },
    },
    '0014_auth_change_signals': {
      async up(db: Kysely<unknown>) {
        await createAuthChangeSignals(db, dialect);
      },
    },
    '0015_ids_per_workspace': {
      async up(db: Kysely<unknown>) {
        // Ids are chosen by the system of record (ADR 20): unique within a workspace, so two
        // workspaces may hold the same id (an export of one imports into another unchanged).
        if (dialect === 'postgres') {
          await sql`ALTER TABLE records DROP CONSTRAINT records_pkey`.execute(db);
          await sql`ALTER TABLE records ADD PRIMARY KEY (workspace_id, id)`.execute(db);
          return;
        }
        // SQLite cannot change a primary key in place: copy into a new table, keeping each
        // row's rowid so the external-content FTS index (keyed by rowid) stays valid, then put
        // back the indexes and the triggers that dropping the old table removed.
        await sql`CREATE TABLE records_new (
          id text NOT NULL, workspace_id text NOT NULL, register text NOT NULL,
          created_at text NOT NULL, updated_at text NOT NULL,
          location_id text, status text, category text, record_type text,
          search_text text NOT NULL, doc text NOT NULL,
          PRIMARY KEY (workspace_id, id))`.execute(db);
        await sql`INSERT INTO records_new (rowid, id, workspace_id, register, created_at, updated_at, location_id, status, category, record_type, search_text, doc)
          SELECT rowid, id, workspace_id, register, created_at, updated_at, location_id, status, category, record_type, search_text, doc FROM records`.execute(
          db,
        );
        await sql`DROP TABLE records`.execute(db);
        await sql`ALTER TABLE records_new RENAME TO records`.execute(db);
        await createRecordIndexes(db);
        await createFtsTriggers(db);
      },
    },
    '0017_admins_per_workspace': {
      async up(db: Kysely<unknown>) {
        // One address may administer several workspaces (one row, one password, per workspace),
        // so inviting an address never tells whether another tenant holds it (issue 25).
        await db.schema.dropIndex('console_admins_active_email').execute();
        await db.schema
          .createIndex('console_admins_active_workspace_email')
          .on('console_admins')
          .columns(['workspace_id', 'email'])
          .unique()
          .where(sql.ref('removed_at'), 'is', null)
          .execute();
        await db.schema.createIndex('console_admins_email').on('console_admins').column('email').execute();
      },
    },
    '0016_imports': {
      async up(db: Kysely<unknown>) {
        // One row per import (HTTP, CLI or console): what the Data page lists.
        await db.schema
          .createTable('record_imports')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('workspace_id', 'text', (c) => c.notNull())
          .addColumn('actor', 'text', (c) => c.notNull())
          .addColumn('started_at', 'text', (c) => c.notNull())
          .addColumn('finished_at', 'text')
          .addColumn('dry_run', 'integer', (c) => c.notNull())
          .addColumn('atomic', 'integer', (c) => c.notNull())
          .addColumn('lines', 'integer', (c) => c.notNull())
          .addColumn('refused', 'integer', (c) => c.notNull())
          .addColumn('report', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex('record_imports_workspace').on('record_imports').columns(['workspace_id', 'started_at']).execute();
      },
    },
    '0019_admin_second_factor_and_sso': {
      async up(db: Kysely<unknown>) {
        // Second factors of console admins (TOTP, recovery codes, passkeys) and each workspace's
        // sign-in rules and OpenID Connect single sign-on (issue 29, points 7 and 8).
        await db.schema
          .alterTable('console_sessions')
          .addColumn('second_factor_pending', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        await db.schema
          .createTable('admin_totp')
          .addColumn('admin_id', 'text', (c) => c.primaryKey())
          .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('last_step', 'bigint', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('admin_recovery_codes')
          .addColumn('code_hash', 'text', (c) => c.primaryKey())
          .addColumn('admin_id', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('used_at', 'text')
          .execute();
        await db.schema.createIndex('admin_recovery_codes_admin').on('admin_recovery_codes').column('admin_id').execute();
        await db.schema
          .createTable('admin_passkeys')
          .addColumn('credential_id', 'text', (c) => c.primaryKey())
          .addColumn('admin_id', 'text', (c) => c.notNull())
          .addColumn('public_key', 'text', (c) => c.notNull())
          .addColumn('counter', 'bigint', (c) => c.notNull())
          .addColumn('transports', 'text', (c) => c.notNull())
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('last_used_at', 'text')
          .execute();
        await db.schema.createIndex('admin_passkeys_admin').on('admin_passkeys').column('admin_id').execute();
        await db.schema
          .createTable('workspace_sign_in')
          .addColumn('workspace_id', 'text', (c) => c.primaryKey())
          .addColumn('require_second_factor', 'integer', (c) => c.notNull())
          .addColumn('password_sign_in', 'integer', (c) => c.notNull())
          .addColumn('sso_issuer', 'text')
          .addColumn('sso_client_id', 'text')
          .addColumn('sso_client_secret_ciphertext', 'text')
          .addColumn('sso_domain', 'text')
          .addColumn('sso_create_admins', 'integer', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .execute();
      },
    },
  };
}

class InlineProvider implements MigrationProvider {
  constructor(private readonly dialect: Dialect) {}
  async getMigrations() {
    return migrations(this.dialect);
  }
}

/** Applies pending migrations. Safe to run from several processes at once (Kysely locks). */
export async function migrate(database: Database): Promise<string[]> {
  const migrator = new Migrator({ db: database.db, provider: new InlineProvider(database.dialect) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
