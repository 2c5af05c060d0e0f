/**
 * Database triggers that announce every change to what key authentication reads (ADR 14), so
 * that each API process can keep an in-process cache of keys and still refuse a revoked key on
 * the next request, whatever wrote the change: the CLI, the console, the operator API, another
 * process, plain SQL. Only the columns that decide admission count: the last-use stamp that
 * authentication itself writes once a minute per key must not flush every process's cache.
 */
import { type Kysely, sql } from 'kysely';
import type { Dialect } from './dialects/engine.js';

/** The PostgreSQL channel; payloads are `key:<key_id>`, `workspace:<id>` or `*` (everything). */
export const AUTH_CHANNEL = 'wsops_auth';

/**
 * What authentication reads of a key (src/store/keys.ts findKeyForAuth) and of its workspace.
 * A column added to that read must be added here too (in a new migration, with watchKeyColumns).
 */
const KEY_COLUMNS = ['key_id', 'workspace_id', 'environment', 'secret_hash', 'scopes', 'expires_at', 'revoked_at'] as const;
/** Migration 0018: the key's IP allowlist is checked on every request too. */
export const KEY_COLUMNS_SINCE_0018 = [...KEY_COLUMNS, 'allowed_ips'] as const;
const WORKSPACE_COLUMNS = ['id', 'modules'] as const;

function changed(columns: readonly string[], distinct: string): string {
  return columns.map((c) => `OLD.${c} ${distinct} NEW.${c}`).join(' OR ');
}

/** Replaces the api_keys update trigger so that it watches `columns` (created by migration 0014). */
export async function watchKeyColumns(db: Kysely<unknown>, dialect: Dialect, columns: readonly string[]): Promise<void> {
  if (dialect === 'sqlite') {
    await sql`DROP TRIGGER api_keys_auth_update`.execute(db);
    await sql
      .raw(
        `CREATE TRIGGER api_keys_auth_update AFTER UPDATE ON api_keys WHEN ${changed(columns, 'IS NOT')} BEGIN UPDATE auth_version SET version = version + 1 WHERE id = 1; END`,
      )
      .execute(db);
    return;
  }
  await sql`DROP TRIGGER api_keys_auth_update ON api_keys`.execute(db);
  await sql
    .raw(`CREATE TRIGGER api_keys_auth_update AFTER UPDATE ON api_keys FOR EACH ROW
      WHEN (${changed(columns, 'IS DISTINCT FROM')}) EXECUTE FUNCTION wsops_auth_changed()`)
    .execute(db);
}

export async function createAuthChangeSignals(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') {
    // One row whose version every admission change moves, in the writing transaction. A
    // process reads it on each request (one prepared statement on the read connection) and
    // trusts its cache only while the version is the one it was filled under.
    await sql`CREATE TABLE auth_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`.execute(db);
    await sql`INSERT INTO auth_version (id, version) VALUES (1, 0)`.execute(db);
    const bump = 'BEGIN UPDATE auth_version SET version = version + 1 WHERE id = 1; END';
    await sql
      .raw(`CREATE TRIGGER api_keys_auth_update AFTER UPDATE ON api_keys WHEN ${changed(KEY_COLUMNS, 'IS NOT')} ${bump}`)
      .execute(db);
    await sql.raw(`CREATE TRIGGER api_keys_auth_delete AFTER DELETE ON api_keys ${bump}`).execute(db);
    await sql
      .raw(`CREATE TRIGGER workspaces_auth_update AFTER UPDATE ON workspaces WHEN ${changed(WORKSPACE_COLUMNS, 'IS NOT')} ${bump}`)
      .execute(db);
    await sql.raw(`CREATE TRIGGER workspaces_auth_delete AFTER DELETE ON workspaces ${bump}`).execute(db);
    return;
  }
  // PostgreSQL sends a notification when (and only if) the writing transaction commits, to every
  // session listening on the channel; identical payloads of one transaction are sent once.
  await sql
    .raw(`CREATE FUNCTION wsops_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          PERFORM pg_notify('${AUTH_CHANNEL}', '*');
        ELSIF TG_TABLE_NAME = 'api_keys' THEN
          PERFORM pg_notify('${AUTH_CHANNEL}', 'key:' || OLD.key_id);
        ELSE
          PERFORM pg_notify('${AUTH_CHANNEL}', 'workspace:' || OLD.id);
        END IF;
        RETURN NULL;
      END $$`)
    .execute(db);
  for (const [table, columns] of [
    ['api_keys', KEY_COLUMNS],
    ['workspaces', WORKSPACE_COLUMNS],
  ] as const) {
    await sql
      .raw(`CREATE TRIGGER ${table}_auth_update AFTER UPDATE ON ${table} FOR EACH ROW
        WHEN (${changed(columns, 'IS DISTINCT FROM')}) EXECUTE FUNCTION wsops_auth_changed()`)
      .execute(db);
    await sql
      .raw(`CREATE TRIGGER ${table}_auth_delete AFTER DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION wsops_auth_changed()`)
      .execute(db);
    await sql
      .raw(`CREATE TRIGGER ${table}_auth_truncate AFTER TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION wsops_auth_changed()`)
      .execute(db);
  }
}
