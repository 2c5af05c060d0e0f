import { ConfigError } from '../config.js';
import { AppError } from '../errors.js';
import { DatabaseUnavailableError } from '../store/database-failure.js';
import { storageFaultOf } from '../store/storage-faults.js';
import { printable, printableJson } from '../text-rules.js';
import { envFileLineOf } from './env-file.js';

/** Exit status for wrong arguments and refused operations (the contract's "exit 2"). */
export const EXIT_USAGE = 2;

export class UsageError extends Error {}

/**
 * Prints machine or human output. Names and descriptions come from workspace admins, so
 * anything unprintable in them is shown escaped, never sent raw to the operator's terminal
 * (text-rules.ts): in JSON as \u escapes, in human output as `\u{1b}`.
 */
export function print(json: boolean, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${printableJson(JSON.stringify(value, null, 2))}\n` : `${printable(human(), 'newlines')}\n`);
}

/** Prints one line that says what was wrong; returns the exit status. */
export function reportFailure(err: unknown): number {
  // A full disk or a lost database is not the operator's wrong argument: one line, exit 1.
  const fault = err instanceof AppError && err.status === 503 ? err : storageFaultOf(err);
  if (fault) {
    process.stderr.write(`wsops: ${printable(fault.message)}\n`);
    return 1;
  }
  if (err instanceof AppError || err instanceof UsageError || err instanceof ConfigError) {
    // Several wrong settings are reported at once, one line each; a value that came from .env
    // says which line of it to fix.
    for (const line of err.message.split('\n')) {
      const name = err instanceof ConfigError ? /^(WSOPS_[A-Z0-9_]+) /.exec(line)?.[1] : undefined;
      const where = name && envFileLineOf(name);
      process.stderr.write(`wsops: ${printable(line)}${where ? ` (set in ${where})` : ''}\n`);
    }
    return EXIT_USAGE;
  }
  if (err instanceof DatabaseUnavailableError) {
    process.stderr.write(`wsops: ${printable(err.message)}\n`);
    return 1;
  }
  process.stderr.write(`wsops: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 1;
}

export function table<T extends object>(items: readonly T[], columns: readonly string[]): string {
  const rows = items as unknown as readonly Record<string, unknown>[];
  if (rows.length === 0) return '(none)';
  const cells = rows.map((r) =>
    columns.map((c) =>
      // One line per row whatever a cell holds: a line feed in a name is shown escaped too.
      printable(r[c] === null || r[c] === undefined ? '-' : Array.isArray(r[c]) ? (r[c] as unknown[]).join(',') : String(r[c])),
    ),
  );
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (vals: readonly string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}

export function parsePositiveInt(name: string, raw: string, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new UsageError(`${name} must be a whole number from 1 to ${max}; got "${raw}"`);
  }
  return Number(raw);
}
