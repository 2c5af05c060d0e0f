/** Server-side console sessions: a random cookie token stored as its SHA-256 hash, with an idle and an absolute life. */
import type { Kysely } from '#kysely';
import { randomBase62 } from '../ids.js';
import type { DB } from '../store/schema.js';
import { sha256 } from './admin-rows.js';

export const SESSION_IDLE_MS = 12 * 3_600_000;

export const SESSION_ABSOLUTE_MS = 7 * 24 * 3_600_000;

/** last_seen_at is written at most this often per session, not on every request. */
const SESSION_TOUCH_MS = 5 * 60_000;

export interface NewSession {
  /** The cookie value; only its SHA-256 is stored. */
  token: string;
  id: string;
  csrfToken: string;
}

/** A session waiting for the second factor lasts this long: enough to open an app or find a code. */
export const PENDING_SESSION_MS = 10 * 60_000;

/**
 * Starts a session with a fresh id (never reusing one from before sign-in). With
 * `secondFactorPending`, the password was right but the second factor is still owed: that
 * session opens no console page, only the second-factor form.
 */
export async function createSession(
  db: Kysely<DB>,
  adminId: string,
  now: number,
  options: { secondFactorPending?: boolean } = {},
): Promise<NewSession> {
  const token = randomBase62(43);
  const csrfToken = randomBase62(43);
  const nowIso = new Date(now).toISOString();
  const id = sha256(token);
  // Sessions past their idle or absolute life are useless: drop them (a small table).
  await db
    .deleteFrom('console_sessions')
    .where((eb) =>
      eb.or([
        eb('last_seen_at', '<=', new Date(now - SESSION_IDLE_MS).toISOString()),
        eb('created_at', '<=', new Date(now - SESSION_ABSOLUTE_MS).toISOString()),
      ]),
    )
    .execute();
  await db
    .insertInto('console_sessions')
    .values({
      id,
      admin_id: adminId,
      csrf_token: csrfToken,
      created_at: nowIso,
      last_seen_at: nowIso,
      second_factor_pending: options.secondFactorPending ? 1 : 0,
    })
    .execute();
  if (!options.secondFactorPending) {
    await db.updateTable('console_admins').set({ last_sign_in_at: nowIso }).where('id', '=', adminId).execute();
  }
  return { token, id, csrfToken };
}

export interface LoadedSession {
  /** `secondFactorPending`: the password was right, the second factor not given yet. */
  session: { id: string; csrfToken: string; secondFactorPending: boolean };
  /** `mustEnrol`: the workspace requires a second factor and this admin has none yet. */
  admin: { id: string; email: string; workspaceId: string; workspaceName: string; mustEnrol: boolean };
}

/** The session of a cookie value, if it exists, its admin is active and neither expiry has passed. */
export async function loadSession(db: Kysely<DB>, token: string, now: number): Promise<LoadedSession | undefined> {
  if (!/^[0-9A-Za-z]{43}$/.test(token)) return undefined;
  const id = sha256(token);
  const row = await db
    .selectFrom('console_sessions as s')
    .innerJoin('console_admins as a', 'a.id', 's.admin_id')
    .innerJoin('workspaces as w', 'w.id', 'a.workspace_id')
    .select([
      's.id',
      's.csrf_token',
      's.created_at',
      's.last_seen_at',
      'a.id as admin_id',
      'a.email',
      'a.removed_at',
      'w.id as workspace_id',
      'w.name',
      's.second_factor_pending',
      (eb) =>
        eb
          .selectFrom('workspace_sign_in as r')
          .select('r.require_second_factor')
          .whereRef('r.workspace_id', '=', 'a.workspace_id')
          .as('require_second_factor'),
      (eb) =>
        eb
          .or([
            eb.exists(eb.selectFrom('admin_totp as t').select('t.admin_id').whereRef('t.admin_id', '=', 'a.id')),
            eb.exists(eb.selectFrom('admin_passkeys as p').select('p.admin_id').whereRef('p.admin_id', '=', 'a.id')),
          ])
          .as('has_factor'),
    ])
    .where('s.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const lastSeen = Date.parse(row.last_seen_at);
  const pending = row.second_factor_pending === 1;
  if (
    row.removed_at ||
    now - lastSeen >= SESSION_IDLE_MS ||
    now - Date.parse(row.created_at) >= (pending ? PENDING_SESSION_MS : SESSION_ABSOLUTE_MS)
  ) {
    await db.deleteFrom('console_sessions').where('id', '=', id).execute();
    return undefined;
  }
  if (now - lastSeen >= SESSION_TOUCH_MS) {
    await db
      .updateTable('console_sessions')
      .set({ last_seen_at: new Date(now).toISOString() })
      .where('id', '=', id)
      .execute();
  }
  return {
    session: { id: row.id, csrfToken: row.csrf_token, secondFactorPending: pending },
    admin: {
      id: row.admin_id,
      email: row.email,
      workspaceId: row.workspace_id,
      workspaceName: row.name,
      // PostgreSQL answers the OR of EXISTS as a boolean, SQLite as 0 or 1.
      mustEnrol: Number(row.require_second_factor ?? 0) === 1 && !row.has_factor,
    },
  };
}

/** Ends a session by its id (the hash of the cookie value). */
export async function endSession(db: Kysely<DB>, sessionId: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id', '=', sessionId).execute();
}
