import { ConfigError } from '../config.js';
import { AppError } from '../errors.js';

/** Exit status for wrong arguments and refused operations (the contract's "exit 2"). */
export const EXIT_USAGE = 2;

export class UsageError extends Error {}

export function print(json: boolean, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

/** Prints one line that says what was wrong; returns the exit status. */
export function reportFailure(err: unknown): number {
  if (err instanceof AppError || err instanceof UsageError || err instanceof ConfigError) {
    process.stderr.write(`wsops: ${err.message}\n`);
    return EXIT_USAGE;
  }
  process.stderr.write(`wsops: unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  return 1;
}

export function table<T extends object>(items: readonly T[], columns: readonly string[]): string {
  const rows = items as unknown as readonly Record<string, unknown>[];
  if (rows.length === 0) return '(none)';
  const cells = rows.map((r) =>
    columns.map((c) => (r[c] === null || r[c] === undefined ? '-' : Array.isArray(r[c]) ? (r[c] as unknown[]).join(',') : String(r[c]))),
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
