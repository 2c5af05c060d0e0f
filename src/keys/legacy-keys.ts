/**
 * The ids of keys made before checksums (ADR 29), read once per process and database: a key
 * whose checksum is wrong is looked up only when its id is one of these, so a mistyped key is
 * refused without a database read. The set only shrinks (no key made since migration 0018 is
 * one), so it is never reread; a key made by a process of an earlier version after this one read
 * the set is accepted here once this process restarts (upgrade every process together).
 */

import type { Clock } from '../clock.js';
import type { Database } from '../store/database.js';
import { listLegacyKeyIds } from './key-lookup.js';

/** What this file takes of the services built at start (services.ts). */
export interface LegacyKeysServices {
  database: Database;
  clock: Clock;
}

const loaded = new WeakMap<object, Promise<ReadonlySet<string>>>();

export function legacyKeyIds(services: LegacyKeysServices): Promise<ReadonlySet<string>> {
  const database = services.database;
  let ids = loaded.get(database);
  if (ids === undefined) {
    ids = listLegacyKeyIds(database.db, services.clock());
    loaded.set(database, ids);
    // A failed read is tried again by the next request that needs it.
    ids.catch(() => loaded.delete(database));
  }
  return ids;
}
