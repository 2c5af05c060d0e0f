import type { Clock } from './clock.js';
import { iso } from './clock.js';
import type { Config } from './config.js';
import { createKey } from './keys/keys.js';
import { READ_SCOPES } from './registers/define.js';
import { seedWorkspace } from './seed/seed.js';
import { createAdminLink, signInUrl } from './sign-in/sign-in-links.js';
import type { Database } from './store/database.js';
import { createWorkspace, listWorkspaces } from './workspaces/workspaces.js';
import type { RecordStore } from './writes/records.js';

/** What this file takes of the services built at start (services.ts). */
export interface DemoServices {
  config: Config;
  database: Database;
  records: RecordStore;
  clock: Clock;
}

export interface DemoResult {
  workspaceId: string;
  key: string;
  records: number;
  /** A one-time console sign-in link for the demo admin (valid 24 hours). */
  consoleLink: string;
}

/**
 * On an empty database, make a demo workspace with seeded data and a key holding every read
 * scope, so a newcomer can call the API at once. Does nothing once any workspace exists.
 */
export async function bootstrapDemo(services: DemoServices): Promise<DemoResult | undefined> {
  if ((await listWorkspaces(services.database.db)).length > 0) return undefined;
  const now = services.clock();
  const ws = await createWorkspace(
    services.database.db,
    'Demo workspace',
    ['vendors', 'approvals', 'systems', 'learning', 'handovers', 'transitions', 'assets', 'workplace'],
    iso(now),
  );
  const seeded = await seedWorkspace(services, ws.id, { scale: 1, seed: 'demo', now });
  const key = await createKey(services.database, {
    workspaceId: ws.id,
    scopes: [...READ_SCOPES],
    environment: services.config.env,
    days: 90,
    name: 'Demo key',
    createdBy: 'demo',
    now,
    maxKeys: services.config.maxKeys,
  });
  const admin = await createAdminLink(services.database, {
    workspaceId: ws.id,
    email: 'demo.admin@example.com',
    actor: 'demo',
    now,
  });
  return { workspaceId: ws.id, key: key.key, records: seeded.total, consoleLink: signInUrl(services.config.baseUrl, admin.token) };
}
