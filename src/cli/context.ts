import { loadConfig } from '../config.js';
import { createServices, type Services } from '../services.js';
import { onDatabase } from './database-target.js';

/** Runs a command with services built from the environment, and always closes them. */
export async function withServices<T>(fn: (services: Services) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const services = await onDatabase(config.databaseUrl, () => createServices(config));
  try {
    return await fn(services);
  } finally {
    await services.close();
  }
}
