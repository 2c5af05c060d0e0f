/**
 * The failure budgets of console sign-in, for each step: the password, and the second factor
 * (an authenticator code, a recovery code or a passkey answer). Each step counts failures
 *
 * - per (account, address) and per address, which hold a guesser at its own addresses;
 * - per account, only for addresses the account never got past that step from: a guesser spread
 *   over many addresses is slowed down, and cannot lock the owner out, who comes back from an
 *   address they used before whatever others send.
 *
 * The second step remembers an address only when a sign-in was completed from it (every factor
 * given): knowing the password opens the first step, so it must not make an address known for
 * the second.
 */
import type { Budget, FailureThrottle } from '../guards/failure-throttle.js';

const WINDOW_MS = 15 * 60_000;
/**
 * Failures allowed in 15 minutes (each budget refills over them): per account from one
 * address, per address whatever the accounts, and per account from addresses it is not known at.
 */
export const SIGN_IN_LIMITS = { perAccountAddress: 5, perAddress: 20, perAccount: 50, windowMs: WINDOW_MS } as const;
/** How long an address an account signed in from stays known. */
const KNOWN_ADDRESS_MS = 30 * 24 * 3_600_000;

function budgets(step: string, account: string, address: string, known: boolean): Budget[] {
  const budget = (key: string, limit: number): Budget => ({ key: `console:${step}${key}`, limit, windowMs: WINDOW_MS });
  return [
    budget(`pair:${account}\n${address}`, SIGN_IN_LIMITS.perAccountAddress),
    budget(`address:${address}`, SIGN_IN_LIMITS.perAddress),
    ...(known ? [] : [budget(`account:${account}`, SIGN_IN_LIMITS.perAccount)]),
  ];
}

const passwordKnownKey = (email: string, address: string) => `console:known:${email}\n${address}`;
const secondFactorKnownKey = (adminId: string, address: string) => `console:2fa:known:${adminId}\n${address}`;

/** The budgets of a password for `email` from `address`. */
export async function passwordBudgets(throttle: FailureThrottle, email: string, address: string, now: number): Promise<Budget[]> {
  return budgets('', email, address, await throttle.remembered(passwordKnownKey(email, address), now));
}

/** A right password for `email` from `address`. */
export function rememberPasswordAddress(throttle: FailureThrottle, email: string, address: string, now: number): Promise<void> {
  return throttle.remember(passwordKnownKey(email, address), KNOWN_ADDRESS_MS, now);
}

/** The budgets of a second factor (code, recovery code, passkey answer) of `adminId` from `address`. */
export async function secondFactorBudgets(throttle: FailureThrottle, adminId: string, address: string, now: number): Promise<Budget[]> {
  return budgets('2fa:', adminId, address, await throttle.remembered(secondFactorKnownKey(adminId, address), now));
}

/** A sign-in completed (every factor given) by `adminId` from `address`. */
export function rememberSignedInAddress(throttle: FailureThrottle, adminId: string, address: string, now: number): Promise<void> {
  return throttle.remember(secondFactorKnownKey(adminId, address), KNOWN_ADDRESS_MS, now);
}
