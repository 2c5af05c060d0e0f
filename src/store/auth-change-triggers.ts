/**
 * What the database triggers that announce every change to what key authentication reads watch
 * (ADR 14), so that each API process can keep an in-process cache of keys and still refuse a
 * revoked key on the next request, whatever wrote the change: the CLI, the console, the operator
 * API, another process, plain SQL. Only the columns that decide admission count: the last-use
 * stamp that authentication itself writes once a minute per key must not flush every process's
 * cache. Each dialect writes the triggers its own way (`createAuthChangeSignals` and
 * `watchKeyColumns` in dialects/sqlite.ts and dialects/postgres.ts).
 */

/** The PostgreSQL channel; payloads are `key:<key_id>`, `workspace:<id>` or `*` (everything). */
export const AUTH_CHANNEL = 'wsops_auth';

/**
 * What authentication reads of a key (src/keys/keys.ts findKeyForAuth) and of its workspace.
 * A column added to that read must be added here too (in a new migration, with watchKeyColumns).
 */
export const KEY_COLUMNS = ['key_id', 'workspace_id', 'environment', 'secret_hash', 'scopes', 'expires_at', 'revoked_at'] as const;
/** Migration 0018: the key's IP allowlist is checked on every request too. */
export const KEY_COLUMNS_SINCE_0018 = [...KEY_COLUMNS, 'allowed_ips'] as const;
export const WORKSPACE_COLUMNS = ['id', 'modules'] as const;

/** A trigger's condition: any of `columns` changed (`distinct`: the dialect's null-safe "differs"). */
export function changedColumns(columns: readonly string[], distinct: 'IS NOT' | 'IS DISTINCT FROM'): string {
  return columns.map((c) => `OLD.${c} ${distinct} NEW.${c}`).join(' OR ');
}
