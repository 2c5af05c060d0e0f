/**
 * Who a workspace's failure alerts go to: its console admins, and the addresses added for it
 * (a team mailbox; `alert_recipients`), set in the console or with `wsops alerts recipients`.
 * A workspace made with `workspace create` has no admin until `admin create`: an address added
 * here is mailed from the start.
 */
import type { Kysely } from '#kysely';
import { recordAudit } from '../audit/audit.js';
import { AppError } from '../errors.js';
import { normalizeEmail } from '../sign-in/admin-rows.js';
import { listAdmins } from '../sign-in/admins.js';
import type { DB } from '../store/schema.js';

/** At most this many added addresses per workspace (a team mailbox or two, not a mailing list). */
export const MAX_ALERT_RECIPIENTS = 20;

/** The added addresses of a workspace, in order. */
export async function listAlertRecipients(db: Kysely<DB>, workspaceId: string): Promise<string[]> {
  const rows = await db.selectFrom('alert_recipients').select('email').where('workspace_id', '=', workspaceId).orderBy('email').execute();
  return rows.map((r) => r.email);
}

/** Every address an alert of the workspace goes to: its admins and the added ones, once each, sorted. */
export async function alertAddresses(db: Kysely<DB>, workspaceId: string): Promise<string[]> {
  const [admins, added] = await Promise.all([listAdmins(db, workspaceId), listAlertRecipients(db, workspaceId)]);
  return [...new Set([...admins.map((a) => a.email), ...added])].sort();
}

/** Adds an address (again: nothing changes). Returns the added addresses after the change. */
export async function addAlertRecipient(
  db: Kysely<DB>,
  input: { workspaceId: string; email: string; actor: string; now: number },
): Promise<string[]> {
  const email = normalizeEmail(input.email);
  const at = new Date(input.now).toISOString();
  return db.transaction().execute(async (trx) => {
    const current = await listAlertRecipients(trx, input.workspaceId);
    if (current.includes(email)) return current;
    if (current.length >= MAX_ALERT_RECIPIENTS) {
      throw new AppError(
        'limit_reached',
        `a workspace has at most ${MAX_ALERT_RECIPIENTS} alert recipients besides its admins; remove one first`,
      );
    }
    await trx.insertInto('alert_recipients').values({ workspace_id: input.workspaceId, email, created_at: at }).execute();
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at,
      actor: input.actor,
      action: 'endpoint.alert_recipient_added',
      target: email,
    });
    return [...current, email].sort();
  });
}

/** Removes an added address; one that was not added is refused with the list. */
export async function removeAlertRecipient(
  db: Kysely<DB>,
  input: { workspaceId: string; email: string; actor: string; now: number },
): Promise<string[]> {
  const email = normalizeEmail(input.email);
  const at = new Date(input.now).toISOString();
  return db.transaction().execute(async (trx) => {
    const removed = await trx
      .deleteFrom('alert_recipients')
      .where('workspace_id', '=', input.workspaceId)
      .where('email', '=', email)
      .executeTakeFirst();
    const left = await listAlertRecipients(trx, input.workspaceId);
    if (Number(removed.numDeletedRows) === 0) {
      throw new AppError(
        'not_found',
        `${email} is not an alert recipient of this workspace (console admins are mailed as admins; the added addresses are: ${left.join(', ') || 'none'})`,
      );
    }
    await recordAudit(trx, {
      workspaceId: input.workspaceId,
      at,
      actor: input.actor,
      action: 'endpoint.alert_recipient_removed',
      target: email,
    });
    return left;
  });
}
