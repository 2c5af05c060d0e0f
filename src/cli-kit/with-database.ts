/**
 * How most commands reach the database: the settings, the migrated database and the clock,
 * without the rest of `Services` (src/cli/context.ts has `withServices` for the few that need it;
 * ADR 37). Here, below the features, so each feature's commands can use it.
 */
import { type Clock, systemClock } from '../clock.js';
import { type Config, loadConfig } from '../config.js';
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
