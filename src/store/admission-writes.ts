/**
 * In-process word that a write changing who is admitted (a revoked key, a module removed) has
 * committed. The database triggers of migration 0014 tell every process; on PostgreSQL that word
 * reaches this process's own listener a moment after the commit, so a console revoke followed
 * at once by an API request to the same process could still meet the cached key. The write
 * paths therefore also say it here, synchronously after their commit, and the key cache of the
 * same database handle drops what it holds before anything else runs (ADR 14).
 *
 * Keyed by the Kysely handle, not a module-wide singleton: several services in one process
 * (tests) each hear only the writes made through their own handle.
 */
import type { Kysely } from 'kysely';
import type { DB } from './schema.js';

const listeners = new WeakMap<Kysely<DB>, Set<() => void>>();

/** Calls `listener` after each admission write made through `db`; returns the unsubscribe. */
export function onAdmissionWrite(db: Kysely<DB>, listener: () => void): () => void {
  let set = listeners.get(db);
  if (!set) {
    set = new Set();
    listeners.set(db, set);
  }
  set.add(listener);
  return () => set.delete(listener);
}

/** Called by a write path after the transaction that changed admission committed. */
export function admissionWritten(db: Kysely<DB>): void {
  const set = listeners.get(db);
  if (set) for (const listener of set) listener();
}
