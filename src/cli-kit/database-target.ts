/**
 * What every command that touches the database goes through: with `--verbose` it names the
 * database on stderr (an operator whose WSOPS_DATABASE_URL was forgotten sees at once that the
 * command works on ./data/wsops.db), and a database that cannot be opened or reached becomes one
 * line naming it (src/store/database-failure.ts), never the driver's stack.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { redactUrl, sqliteFileOf } from '../redact-url.js';
import { databaseFailure } from '../store/database-failure.js';
import { UsageError } from './output.js';

let verbose = false;

/** Set once from the global `--verbose` option, before the command runs (src/cli/main.ts). */
export function setVerbose(on: boolean): void {
  verbose = on;
}

export function isVerbose(): boolean {
  return verbose;
}

/** The address without its password, its dialect, and for SQLite the absolute path of the file. */
export function describeDatabase(url: string): string {
  const file = sqliteFileOf(url);
  return file === undefined ? `${redactUrl(url)} (PostgreSQL)` : `${url} (SQLite, ${resolve(file)})`;
}

export interface TargetOptions {
  /**
   * May this command create a new SQLite database where none is? `serve` and `migrate` do. Any
   * other command refuses the default database (WSOPS_DATABASE_URL unset) when it does not exist:
   * that is the forgotten setting, not a wish for an empty database.
   */
  create?: boolean;
  /** What the database is to this command, in the verbose line (default "database"). */
  role?: string;
}

export async function onDatabase<T>(url: string, open: () => Promise<T>, options: TargetOptions = {}): Promise<T> {
  if (verbose) process.stderr.write(`${options.role ?? 'database'}: ${describeDatabase(url)}\n`);
  const unset = (process.env.WSOPS_DATABASE_URL ?? '') === '';
  const file = sqliteFileOf(url);
  if (!options.create && unset && file !== undefined && !existsSync(file)) {
    throw new UsageError(
      `WSOPS_DATABASE_URL is not set and the default database ${describeDatabase(url)} does not exist: set WSOPS_DATABASE_URL (in the environment or in .env), or run \`wsops migrate\` to create the default database`,
    );
  }
  try {
    return await open();
  } catch (err) {
    throw databaseFailure(err, url) ?? err;
  }
}
