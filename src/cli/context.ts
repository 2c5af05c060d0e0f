/**
 * How a command reaches the database. Most commands need only the settings, the database and the
 * clock (`withDatabase`); the few that read records, encrypt secrets or run actions need the
 * whole of `Services` (`withServices`), whose modules (the registers, the metrics' prom-client,
 * the page reader, the key cache) cost an operator's `wsops key create` about a third of its
 * start-up when every command loaded them (ADR 37). Both apply pending migrations first.
 */
import { type Clock, systemClock } from '../clock.js';
import { type Config, loadConfig } from '../config.js';
import type { Services } from '../services.js';
import { type Database, openDatabase } from '../store/database.js';
import { migrate } from '../store/migrate.js';
import { onDatabase } from './database-target.js';

/** What most commands work with. `Services` has the same three, so a command may take either. */
export interface CommandContext {
  config: Config;
  database: Database;
  clock: Clock;
}

/** Runs a command on the migrated database named by the settings, and always closes it. */
export async function withDatabase<T>(fn: (context: CommandContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = await onDatabase(config.databaseUrl, async () => {
    const opened = openDatabase(config.databaseUrl, undefined, { sqliteMmapMb: config.sqliteMmapMb });
    try {
      await migrate(opened);
      return opened;
    } catch (err) {
      await opened.close();
      throw err;
    }
  });
  try {
    return await fn({ config, database, clock: systemClock });
  } finally {
    await database.close();
  }
}

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
