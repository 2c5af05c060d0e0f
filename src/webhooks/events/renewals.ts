/**
 * vendor.renewal_approaching: once per renewal date, when the vendor's cancellation deadline
 * (renewal date minus notice period) first comes within 30 days. The notice row's primary key
 * (workspace, vendor, renewal date) makes "once" hold with several workers checking at once:
 * only the insert that wins emits the event, in the same transaction.
 */

import type { Clock } from '../../clock.js';
import type { Database } from '../../store/database.js';
import { eventData } from './event-types.js';
import { emitEvent } from './outbox.js';

/** What this file takes of the services built at start (services.ts). */
export interface RenewalsServices {
  database: Database;
  clock: Clock;
}

export const RENEWAL_WINDOW_DAYS = 30;
export const RENEWAL_CHECK_INTERVAL_MS = 15 * 60_000;
const DAY_MS = 86_400_000;

export interface RenewalCheckResult {
  checked: number;
  events: { event_id: string; workspace_id: string; vendor_id: string; renewal_date: string }[];
}

export async function checkRenewals(services: RenewalsServices, workspaceId?: string): Promise<RenewalCheckResult> {
  const now = services.clock();
  const today = new Date(now).toISOString().slice(0, 10);
  const horizon = new Date(now + RENEWAL_WINDOW_DAYS * DAY_MS).toISOString().slice(0, 10);
  const db = services.database.db;
  let wsQuery = db.selectFrom('workspaces').select(['id', 'modules']);
  if (workspaceId) wsQuery = wsQuery.where('id', '=', workspaceId);
  const workspaces = (await wsQuery.execute()).filter((w) => w.modules.split(' ').includes('vendors'));
  const result: RenewalCheckResult = { checked: 0, events: [] };
  for (const ws of workspaces) {
    const rows = await db.selectFrom('records').select('doc').where('workspace_id', '=', ws.id).where('register', '=', 'vendors').execute();
    for (const { doc } of rows) {
      result.checked++;
      const vendor = JSON.parse(doc) as Record<string, unknown>;
      const deadline = vendor.cancellation_deadline as string | null;
      const renewalDate = vendor.renewal_date as string | null;
      if (!deadline || !renewalDate || deadline < today || deadline > horizon) continue;
      if (vendor.status === 'CANCELLED' || vendor.status === 'EXPIRED') continue;
      const emitted = await db.transaction().execute(async (trx) => {
        const inserted = await trx
          .insertInto('renewal_notices')
          .values({
            workspace_id: ws.id,
            vendor_id: vendor.id as string,
            renewal_date: renewalDate,
            event_id: '',
            created_at: new Date(now).toISOString(),
          })
          .onConflict((oc) => oc.columns(['workspace_id', 'vendor_id', 'renewal_date']).doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return undefined;
        const event = await emitEvent(trx, ws.id, 'vendor.renewal_approaching', eventData.vendorRenewal(vendor), now);
        await trx
          .updateTable('renewal_notices')
          .set({ event_id: event.id })
          .where('workspace_id', '=', ws.id)
          .where('vendor_id', '=', vendor.id as string)
          .where('renewal_date', '=', renewalDate)
          .execute();
        return event.id;
      });
      if (emitted)
        result.events.push({ event_id: emitted, workspace_id: ws.id, vendor_id: vendor.id as string, renewal_date: renewalDate });
    }
  }
  return result;
}
