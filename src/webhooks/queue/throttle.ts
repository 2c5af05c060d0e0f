/**
 * The per-endpoint throttle (ADR 33): at most `max_per_second` deliveries a second to
 * one endpoint, for receivers that cannot take bursts. Throttled deliveries stay pending in
 * the queue until the endpoint's turn: never dropped, no attempt recorded, so they count
 * neither as failures nor toward auto-disable. The claim (queue.ts) takes a throttled
 * endpoint's jobs only once its `throttle_next_at` has come, at most `throttleBurst` of them,
 * and moves `throttle_next_at` on by the time those jobs are worth at the rate; it does both
 * under the claim's lock, so the rate holds however many workers share the database.
 */

import { recordAudit } from '../../audit/audit.js';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Database } from '../../store/database.js';

/** What this file takes of the services built at start (services.ts). */
export interface ThrottleServices {
  database: Database;
  clock: Clock;
}

export const MAX_THROTTLE_PER_SECOND = 10_000;
/** A throttled endpoint is sent at most a tenth of a second's worth at once (at least one). */
export const THROTTLE_SLOTS_PER_SECOND = 10;
/**
 * How far behind its schedule a throttled endpoint may start from: a claim a little late (the
 * worker polls) does not lose that time, but an endpoint idle for a minute gets no burst.
 */
const THROTTLE_CATCH_UP_MS = 1000 / THROTTLE_SLOTS_PER_SECOND;

/** Most jobs of a throttled endpoint in one claim (the SQL of the claim computes the same). */
export function throttleBurst(maxPerSecond: number): number {
  return Math.max(1, Math.floor(maxPerSecond / THROTTLE_SLOTS_PER_SECOND));
}

/** When a throttled endpoint may next be sent anything, after `sent` jobs were claimed at `now`. */
export function nextThrottleAt(maxPerSecond: number, previous: string | null, sent: number, now: number): string {
  const from = Math.max(previous ? Date.parse(previous) : now, now - THROTTLE_CATCH_UP_MS);
  return new Date(from + Math.ceil((sent * 1000) / maxPerSecond)).toISOString();
}

/**
 * Reads a throttle as typed in the console or the CLI: a whole number of deliveries per second,
 * or empty / "none" for no throttle.
 */
export function parseThrottle(raw: string | number | null | undefined): number | null {
  const text = String(raw ?? '').trim();
  if (text === '' || text.toLowerCase() === 'none') return null;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > MAX_THROTTLE_PER_SECOND) {
    throw new AppError(
      'invalid_parameter',
      `the throttle must be a whole number of deliveries per second from 1 to ${MAX_THROTTLE_PER_SECOND.toLocaleString('en')}, or empty (none); got "${text}"`,
      { param: 'max_per_second' },
    );
  }
  return n;
}

/** Sets or clears an endpoint's throttle; applies to the next claim of every worker. */
export async function setThrottle(
  services: ThrottleServices,
  workspaceId: string,
  id: string,
  maxPerSecond: number | null,
  actor = 'cli',
): Promise<{ id: string; max_per_second: number | null }> {
  const checked = parseThrottle(maxPerSecond);
  const at = new Date(services.clock()).toISOString();
  return services.database.db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('webhook_endpoints')
      .set({ max_per_second: checked, throttle_next_at: null, updated_at: at })
      .where('id', '=', id)
      .where('workspace_id', '=', workspaceId)
      .returning('id')
      .executeTakeFirst();
    if (!row) throw new AppError('not_found', `no webhook endpoint ${id} in workspace ${workspaceId}; list them with: wsops endpoint list`);
    await recordAudit(trx, { workspaceId, at, actor, action: 'endpoint.throttle_set', target: id, detail: { max_per_second: checked } });
    return { id, max_per_second: checked };
  });
}
