/**
 * An admin's passkeys (WebAuthn credentials) and the challenges of their ceremonies. The
 * ceremonies themselves (options, signature checks) are src/sign-in/webauthn.ts; this file
 * only keeps what they need stored:
 *
 * - a credential's public key (COSE, base64url) and its signature counter, which only moves
 *   forward (a counter that goes back means a copied authenticator: refused by the ceremony,
 *   and the update here is conditional on the counter read, so two uses cannot both pass);
 * - challenges bound to one console session and one purpose, deleted as they are checked (used
 *   at most once) and refused after their expiry.
 */
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import type { AdminPasskeysTable, DB, WebauthnChallengesTable } from '../store/schema.js';
import { factorSummary, replaceRecoveryCodes } from './second-factor.js';

export type PasskeyRow = AdminPasskeysTable;
export type ChallengePurpose = WebauthnChallengesTable['purpose'];

export async function listPasskeys(db: Kysely<DB>, adminId: string): Promise<PasskeyRow[]> {
  return db.selectFrom('admin_passkeys').selectAll().where('admin_id', '=', adminId).orderBy('created_at').execute();
}

export async function findPasskey(db: Kysely<DB>, adminId: string, credentialId: string): Promise<PasskeyRow | undefined> {
  return db
    .selectFrom('admin_passkeys')
    .selectAll()
    .where('admin_id', '=', adminId)
    .where('credential_id', '=', credentialId)
    .executeTakeFirst();
}

/** Stores a challenge for one session and purpose; challenges past their expiry go at the same time. */
export async function issueChallenge(
  db: Kysely<DB>,
  input: { challenge: string; sessionId: string; purpose: ChallengePurpose; now: number; lifeMs: number },
): Promise<void> {
  const nowIso = new Date(input.now).toISOString();
  await db.deleteFrom('webauthn_challenges').where('expires_at', '<', nowIso).execute();
  await db
    .insertInto('webauthn_challenges')
    .values({
      challenge: input.challenge,
      session_id: input.sessionId,
      purpose: input.purpose,
      expires_at: new Date(input.now + input.lifeMs).toISOString(),
    })
    .execute();
}

export type ChallengeCheck = 'ok' | 'unknown' | 'expired';

/**
 * Takes a challenge of this session and purpose: deleted in the same statement that finds it,
 * so of two requests with one challenge only one gets 'ok'. 'unknown': never issued to this
 * session for this purpose, or used already.
 */
export async function takeChallenge(
  db: Kysely<DB>,
  input: { challenge: string; sessionId: string; purpose: ChallengePurpose; now: number },
): Promise<ChallengeCheck> {
  const row = await db
    .deleteFrom('webauthn_challenges')
    .where('challenge', '=', input.challenge)
    .where('session_id', '=', input.sessionId)
    .where('purpose', '=', input.purpose)
    .returning('expires_at')
    .executeTakeFirst();
  if (!row) return 'unknown';
  return Date.parse(row.expires_at) > input.now ? 'ok' : 'expired';
}

export interface NewPasskey {
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
}

/**
 * Stores a verified passkey under a name. Returns 'duplicate' when that credential is stored
 * already; otherwise the recovery codes when this is the admin's first factor (new ones), else [].
 */
export async function addPasskey(
  db: Kysely<DB>,
  input: { adminId: string; workspaceId: string; actor: string; name: string; passkey: NewPasskey; now: number },
): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false; reason: 'duplicate' }> {
  const before = await factorSummary(db, input.adminId);
  const nowIso = new Date(input.now).toISOString();
  // One statement decides a duplicate: a check before the insert let two registrations of one
  // authenticator (two tabs, a retried request) both pass it, and the second failed on the key.
  const added = await db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('admin_passkeys')
      .values({
        credential_id: input.passkey.credentialId,
        admin_id: input.adminId,
        public_key: input.passkey.publicKey,
        counter: input.passkey.counter,
        transports: input.passkey.transports.join(' '),
        name: input.name,
        created_at: nowIso,
        last_used_at: null,
      })
      .onConflict((oc) => oc.column('credential_id').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.actor,
      action: 'admin.passkey_added',
      target: input.adminId,
      detail: { name: input.name },
    });
    return true;
  });
  if (!added) return { ok: false, reason: 'duplicate' };
  const recoveryCodes = before.recoveryCodesLeft === 0 ? await replaceRecoveryCodes(db, input.adminId, input.now) : [];
  return { ok: true, recoveryCodes };
}

/**
 * Records a use: the new counter and the time, only if the counter is still the one the
 * ceremony checked against (false: another request used the passkey in between).
 */
export async function recordPasskeyUse(
  db: Kysely<DB>,
  input: { credentialId: string; checkedCounter: number; newCounter: number; now: number },
): Promise<boolean> {
  const updated = await db
    .updateTable('admin_passkeys')
    .set({ counter: input.newCounter, last_used_at: new Date(input.now).toISOString() })
    .where('credential_id', '=', input.credentialId)
    .where('counter', '=', input.checkedCounter)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Removes a passkey of the admin (the recovery codes go too when no second factor is left). */
export async function removePasskey(
  db: Kysely<DB>,
  input: { adminId: string; workspaceId: string; actor: string; credentialId: string; now: number },
): Promise<boolean> {
  const nowIso = new Date(input.now).toISOString();
  return db.transaction().execute(async (trx) => {
    const gone = await trx
      .deleteFrom('admin_passkeys')
      .where('admin_id', '=', input.adminId)
      .where('credential_id', '=', input.credentialId)
      .returning('name')
      .executeTakeFirst();
    if (!gone) return false;
    const left = await factorSummary(trx, input.adminId);
    if (!left.totp && left.passkeys === 0) await trx.deleteFrom('admin_recovery_codes').where('admin_id', '=', input.adminId).execute();
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.actor,
      action: 'admin.passkey_removed',
      target: input.adminId,
      detail: { name: gone.name },
    });
    return true;
  });
}
