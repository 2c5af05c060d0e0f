/** A key as the console, the CLI and the portal show it: its row, with its state worked out at a given time. */
import type { DB } from '../store/schema.js';
import { DAY_MS, EXPIRING_DAYS, UNUSED_DAYS } from './key-terms.js';

export interface KeySummary {
  key_id: string;
  name: string;
  environment: string;
  scopes: string[];
  created_at: string;
  expires_at: string;
  /** When it was or will be revoked (a rolled key is revoked at the end of its grace). */
  revoked_at: string | null;
  last_used_at: string | null;
  /** Client address of the last use (behind WSOPS_TRUSTED_PROXIES: the client's, not the proxy's). */
  last_used_ip: string | null;
  status: 'valid' | 'expired' | 'revoked';
  /** Who created it: `cli`, `console:<email>`, `demo` (null for keys from before this was kept). */
  created_by: string | null;
  /** CIDR ranges it may be used from; null: any address. */
  allowed_ips: string[] | null;
  /** Valid, and never used or not used in the last 30 days: a candidate for revocation. */
  unused: boolean;
  /** Valid and expiring within 14 days. */
  expiring_soon: boolean;
}

/** A key is revoked once its revoked_at has come (a roll sets it in the future). */
export function isRevoked(revokedAt: string | null, now: number): boolean {
  return revokedAt !== null && Date.parse(revokedAt) <= now;
}

export function summarize(row: DB['api_keys'], now: number): KeySummary {
  const status = isRevoked(row.revoked_at, now) ? 'revoked' : Date.parse(row.expires_at) <= now ? 'expired' : 'valid';
  const valid = status === 'valid';
  return {
    key_id: row.key_id,
    name: row.name,
    environment: row.environment,
    scopes: row.scopes.split(' '),
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
    last_used_ip: row.last_used_ip,
    status,
    created_by: row.created_by,
    allowed_ips: row.allowed_ips ? row.allowed_ips.split(' ') : null,
    unused: valid && (row.last_used_at === null || Date.parse(row.last_used_at) <= now - UNUSED_DAYS * DAY_MS),
    expiring_soon: valid && Date.parse(row.expires_at) - now <= EXPIRING_DAYS * DAY_MS,
  };
}
