/**
 * An admin's second factor: an authenticator app (TOTP, RFC 6238, by `otpauth`) and one-time
 * recovery codes. Passkeys are in passkeys.ts.
 *
 * - The TOTP secret must be recoverable to check codes, so it is sealed with the secret box
 *   (AES-256-GCM, key derived from WSOPS_SECRET), never stored in the clear.
 * - A code is accepted at most once: the 30-second step it belongs to is stored, and a code of
 *   that step or an earlier one is refused (someone who saw it over a shoulder cannot reuse it).
 * - Recovery codes are random (50 bits each), shown once, stored only as SHA-256, usable once.
 */
import { createHash, randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import type { DB } from '../store/schema.js';

/** Codes one step either side of now are accepted (clock drift of a phone). */
const TOTP_WINDOW = 1;
const TOTP_PERIOD_S = 30;
export const RECOVERY_CODE_COUNT = 10;
/** Crockford-like alphabet without look-alikes (no 0/o, 1/l/i). */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

export interface SealBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function totpFor(secretBase32: string, label: string): TOTP {
  return new TOTP({ issuer: 'wsops', label, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD_S, secret: Secret.fromBase32(secretBase32) });
}

/** A new secret for enrolment: its base32 form (typed into an app) and the otpauth:// URI. */
export function newTotpSecret(email: string): { secret: string; uri: string } {
  const secret = new Secret({ size: 20 }).base32;
  return { secret, uri: totpFor(secret, email).toString() };
}

/** The 30-second step whose code `code` is, within the window around `now`, or undefined. */
export function totpStep(secret: string, code: string, now: number): number | undefined {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return undefined;
  const delta = totpFor(secret, 'x').validate({ token, timestamp: now, window: TOTP_WINDOW });
  return delta === null ? undefined : Math.floor(now / 1000 / TOTP_PERIOD_S) + delta;
}

/** The current code of a secret (for tests and for nothing else). */
export function totpCode(secret: string, now: number): string {
  return totpFor(secret, 'x').generate({ timestamp: now });
}

/** `abcde-fghjk`: ten characters of a 31-letter alphabet, about 50 bits. */
function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < 10; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

function normalizeRecoveryCode(raw: string): string {
  const compact = raw.toLowerCase().replace(/[\s-]+/g, '');
  return compact.length === 10 ? `${compact.slice(0, 5)}-${compact.slice(5)}` : compact;
}

export interface FactorSummary {
  totp: boolean;
  passkeys: number;
  recoveryCodesLeft: number;
}

export async function factorSummary(db: Kysely<DB>, adminId: string): Promise<FactorSummary> {
  const [totp, passkeys, codes] = await Promise.all([
    db.selectFrom('admin_totp').select('admin_id').where('admin_id', '=', adminId).executeTakeFirst(),
    db
      .selectFrom('admin_passkeys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('admin_id', '=', adminId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('admin_recovery_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('admin_id', '=', adminId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow(),
  ]);
  return { totp: totp !== undefined, passkeys: Number(passkeys.n), recoveryCodesLeft: Number(codes.n) };
}

export function hasSecondFactor(summary: FactorSummary): boolean {
  return summary.totp || summary.passkeys > 0;
}

/** Replaces the admin's recovery codes with new ones; returns them (shown once). */
export async function replaceRecoveryCodes(db: Kysely<DB>, adminId: string, now: number): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const nowIso = new Date(now).toISOString();
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('admin_recovery_codes').where('admin_id', '=', adminId).execute();
    await trx
      .insertInto('admin_recovery_codes')
      .values(codes.map((c) => ({ code_hash: sha256(c), admin_id: adminId, created_at: nowIso, used_at: null })))
      .execute();
  });
  return codes;
}

export interface EnrolTotpInput {
  adminId: string;
  workspaceId: string;
  actor: string;
  secret: string;
  code: string;
  now: number;
  box: SealBox;
}

/**
 * Turns the authenticator app on once the admin proves it works (a current code of the new
 * secret). Returns the recovery codes when this is the admin's first factor (new ones), else [].
 */
export async function enrolTotp(db: Kysely<DB>, input: EnrolTotpInput): Promise<{ ok: true; recoveryCodes: string[] } | { ok: false }> {
  const step = totpStep(input.secret, input.code, input.now);
  if (step === undefined) return { ok: false };
  const before = await factorSummary(db, input.adminId);
  const nowIso = new Date(input.now).toISOString();
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('admin_totp').where('admin_id', '=', input.adminId).execute();
    await trx
      .insertInto('admin_totp')
      .values({ admin_id: input.adminId, secret_ciphertext: input.box.seal(input.secret), created_at: nowIso, last_step: step })
      .execute();
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.actor,
      action: 'admin.totp_enabled',
      target: input.adminId,
      detail: {},
    });
  });
  const recoveryCodes = before.recoveryCodesLeft === 0 ? await replaceRecoveryCodes(db, input.adminId, input.now) : [];
  return { ok: true, recoveryCodes };
}

export type CodeCheck = 'ok' | 'wrong' | 'replayed';

/**
 * Checks a code of the admin's authenticator app and, when right, marks its step used in the
 * same statement, so two requests with one code cannot both pass.
 */
export async function checkTotp(db: Kysely<DB>, box: SealBox, adminId: string, code: string, now: number): Promise<CodeCheck> {
  const row = await db.selectFrom('admin_totp').selectAll().where('admin_id', '=', adminId).executeTakeFirst();
  if (!row) return 'wrong';
  const step = totpStep(box.open(row.secret_ciphertext), code, now);
  if (step === undefined) return 'wrong';
  const claimed = await db
    .updateTable('admin_totp')
    .set({ last_step: step })
    .where('admin_id', '=', adminId)
    .where('last_step', '<', step)
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1 ? 'ok' : 'replayed';
}

/** Uses one recovery code of the admin (each works once). */
export async function useRecoveryCode(db: Kysely<DB>, adminId: string, raw: string, now: number): Promise<boolean> {
  const code = normalizeRecoveryCode(raw);
  if (!/^[a-z0-9]{5}-[a-z0-9]{5}$/.test(code)) return false;
  const used = await db
    .updateTable('admin_recovery_codes')
    .set({ used_at: new Date(now).toISOString() })
    .where('code_hash', '=', sha256(code))
    .where('admin_id', '=', adminId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) === 1;
}

/** Turns the authenticator app off (the recovery codes go too when no passkey is left). */
export async function disableTotp(
  db: Kysely<DB>,
  input: { adminId: string; workspaceId: string; actor: string; now: number },
): Promise<void> {
  const nowIso = new Date(input.now).toISOString();
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('admin_totp').where('admin_id', '=', input.adminId).execute();
    const { n } = await trx
      .selectFrom('admin_passkeys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('admin_id', '=', input.adminId)
      .executeTakeFirstOrThrow();
    if (Number(n) === 0) await trx.deleteFrom('admin_recovery_codes').where('admin_id', '=', input.adminId).execute();
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at: nowIso,
      actor: input.actor,
      action: 'admin.totp_disabled',
      target: input.adminId,
      detail: {},
    });
  });
}
