/**
 * Console passwords: hashed with scrypt (memory-hard; parameters stored with each hash, so they
 * can be raised later without breaking existing hashes), a fresh salt per hash; checked in
 * constant time, against a dummy hash when the address is unknown.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { type Kysely, sql } from '#kysely';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import type { DB } from '../store/schema.js';
import { type Admin, toAdmin } from './admin-rows.js';

export const MIN_PASSWORD_LENGTH = 12;

const MAX_PASSWORD_LENGTH = 1024;

/** scrypt cost: N=2^15, r=8, p=1 (32 MiB, tens of milliseconds): OWASP's recommended minimum. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, keylen: 32 } as const;

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError('invalid_parameter', `the password must be at least ${MIN_PASSWORD_LENGTH} characters long`, {
      param: 'password',
    });
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new AppError('invalid_parameter', `the password must be at most ${MAX_PASSWORD_LENGTH} characters long`, {
      param: 'password',
    });
  }
}

export function scrypt(password: string, salt: Buffer, N: number, r: number, p: number, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, keylen, { N, r, p, maxmem: 256 * N * r }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$hash` (salt and hash in base64); `cost` other than SCRYPT only in tests. */
export async function hashPassword(password: string, cost: { N: number; r: number; p: number; keylen: number } = SCRYPT): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, cost.N, cost.r, cost.p, cost.keylen);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** A hash of nothing anyone knows: checked when the email is unknown, so timing says nothing. */
let dummyHash: Promise<string> | undefined;

async function passwordMatches(password: string, stored: string | null): Promise<boolean> {
  dummyHash ??= hashPassword(randomBase62(32));
  const encoded = stored ?? (await dummyHash);
  const [scheme, n, r, p, salt, hash] = encoded.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(
    password.slice(0, MAX_PASSWORD_LENGTH),
    Buffer.from(salt, 'base64'),
    Number(n),
    Number(r),
    Number(p),
    expected.length,
  );
  return timingSafeEqual(actual, expected) && stored !== null;
}

/** Sets a new password for an admin and ends their sessions. */
export async function setPassword(db: Kysely<DB>, adminId: string, password: string): Promise<void> {
  checkPassword(password);
  const passwordHash = await hashPassword(password);
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('console_admins')
      .set({ password_hash: passwordHash })
      .where('id', '=', adminId)
      .where('removed_at', 'is', null)
      .execute();
    await trx.deleteFrom('console_sessions').where('admin_id', '=', adminId).execute();
  });
}

/**
 * The admin whose email and password these are, or undefined. scrypt runs whether or not the
 * address is known (or has a password yet), so the answer's timing does not tell.
 */
export async function verifyPassword(db: Kysely<DB>, email: string, password: string): Promise<Admin | undefined> {
  const normalized = email.trim().toLowerCase();
  // An address may administer several workspaces, each with its own password: the one whose
  // password this is, the most recently used first when several share it.
  const rows = await db
    .selectFrom('console_admins')
    .selectAll()
    .where('email', '=', normalized)
    .where('removed_at', 'is', null)
    .orderBy(sql`coalesce(last_sign_in_at, '')`, 'desc')
    .orderBy('created_at', 'desc')
    .limit(MAX_WORKSPACES_PER_ADDRESS)
    .execute();
  if (rows.length === 0) {
    await passwordMatches(password, null);
    return undefined;
  }
  for (const row of rows) if (await passwordMatches(password, row.password_hash)) return toAdmin(row);
  return undefined;
}

/** Workspaces whose passwords one sign-in tries (each costs a scrypt). */
export const MAX_WORKSPACES_PER_ADDRESS = 10;
