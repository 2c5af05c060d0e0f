/** How long keys live and when they are flagged: the terms the lifecycle, the console and /metrics share. */
export const DEFAULT_KEY_DAYS = 90;

export const MAX_KEY_DAYS = 365;

export const DAY_MS = 86_400_000;

/** A valid key not used for this long (or never) is marked so an admin can revoke it. */
export const UNUSED_DAYS = 30;

/** A valid key expiring within this many days is flagged (console, /metrics). */
export const EXPIRING_DAYS = 14;

/** Graces a roll offers: the old key is revoked this long after its successor is made. */
export const ROLL_GRACES: Readonly<Record<string, number>> = { '0': 0, '1h': 3_600_000, '24h': DAY_MS, '7d': 7 * DAY_MS };
