/**
 * The URL policy of the server that delivers, recorded where the CLI can read it. The CLI and
 * the server read their settings separately: with WSOPS_ALLOW_PRIVATE_WEBHOOKS on the CLI but
 * not on the server, an endpoint on 127.0.0.1 registers and then every delivery is refused
 * (url_refused). `serve` records its policy in the settings table when its delivery worker
 * starts, so `endpoint create` can warn at once instead.
 */
import type { Kysely } from '#kysely';
import type { Config } from '../../config.js';
import type { Database } from '../../store/database.js';
import type { DB } from '../../store/schema.js';
import { checkEndpointUrl } from '../destinations/address.js';
import { ALLOW_PRIVATE_HINT, liftedByAllowPrivate } from '../destinations/url-safety.js';

/** What this file takes of the services built at start (services.ts). */
export interface ServedUrlPolicyServices {
  config: Config;
  database: Database;
}

const SETTING = 'served_url_policy';

export interface ServedUrlPolicy {
  allow_private_webhooks: boolean;
  /** When the delivering server started (ISO 8601). */
  started_at: string;
}

/** Called by `serve` when its delivery worker starts; the last server started wins. */
export async function recordServedUrlPolicy(db: Kysely<DB>, policy: ServedUrlPolicy): Promise<void> {
  const value = JSON.stringify(policy);
  await db
    .insertInto('settings')
    .values({ name: SETTING, value })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value }))
    .execute();
}

export async function servedUrlPolicy(db: Kysely<DB>): Promise<ServedUrlPolicy | undefined> {
  const row = await db.selectFrom('settings').select('value').where('name', '=', SETTING).executeTakeFirst();
  if (!row) return undefined;
  try {
    const parsed = JSON.parse(row.value) as Partial<ServedUrlPolicy>;
    if (typeof parsed.allow_private_webhooks !== 'boolean' || typeof parsed.started_at !== 'string') return undefined;
    return { allow_private_webhooks: parsed.allow_private_webhooks, started_at: parsed.started_at };
  } catch {
    return undefined;
  }
}

/**
 * A warning when the URL just registered passed only because WSOPS_ALLOW_PRIVATE_WEBHOOKS is set
 * here, and the server that delivers is not known to have it too; undefined when all is well.
 */
export async function deliveryRefusalWarning(services: ServedUrlPolicyServices, url: string): Promise<string | undefined> {
  if (!services.config.allowPrivateWebhooks) return undefined;
  let reason: string;
  try {
    await checkEndpointUrl(url, { allowPrivate: false });
    return undefined;
  } catch (err) {
    const rule = (err as { extra?: Record<string, unknown> }).extra?.['rule'];
    if (!liftedByAllowPrivate(rule)) return undefined;
    reason = (err as Error).message.replace(`; ${ALLOW_PRIVATE_HINT}`, '');
  }
  const served = await servedUrlPolicy(services.database.db);
  if (served?.allow_private_webhooks) return undefined;
  if (served) {
    return `warning: the server that delivers (started ${served.started_at}) runs without WSOPS_ALLOW_PRIVATE_WEBHOOKS, so every delivery to this URL will be refused (url_refused): ${reason}. Restart it with WSOPS_ALLOW_PRIVATE_WEBHOOKS=true (test and development only)`;
  }
  return `warning: this URL is accepted only because WSOPS_ALLOW_PRIVATE_WEBHOOKS=true here (${reason}); no server has delivered from this database yet. Start the server with WSOPS_ALLOW_PRIVATE_WEBHOOKS=true too, or every delivery to this URL is refused (url_refused)`;
}
