/**
 * How the few commands that read records, encrypt secrets or run actions reach the database: the
 * whole of `Services` (`withServices`), whose modules (the registers, the metrics' prom-client,
 * the page reader, the key cache) every other command is spared by `withDatabase`
 * (src/cli-kit/with-database.ts; ADR 37). Pending migrations are applied first.
 */

import { onDatabase } from '../cli-kit/database-target.js';
import { loadConfig } from '../config.js';
import type { Services } from '../services.js';

/** Runs a command with services built from the environment, and always closes them. */
export async function withServices<T>(fn: (services: Services) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const { createServices } = await import('../services.js');
  const services = await onDatabase(config.databaseUrl, () => createServices(config));
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}
