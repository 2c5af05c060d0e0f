import type { Command } from 'commander';
import { describeDatabase, isVerbose } from '../cli-kit/database-target.js';
import { parsePositiveInt, print, UsageError } from '../cli-kit/output.js';
import { ConfigError, checkDatabaseUrl, loadConfig } from '../config.js';
import { AppError } from '../errors.js';
import { copyDeployment, DEFAULT_BATCH_ROWS } from '../store/copy.js';
import { openDatabase, redactUrl } from '../store/database.js';
import { progressBar } from './progress.js';
import { secretArgument } from './secret-input.js';

/** What the operator must do about the master secret that seals the endpoint secrets. */
function masterSecretNote(envSecret: string | undefined, stored: string | undefined, shown: boolean) {
  if (envSecret !== undefined) {
    return {
      source: 'WSOPS_SECRET' as const,
      note: 'Endpoint signing secrets are sealed with WSOPS_SECRET: start the new deployment with the same WSOPS_SECRET, or no endpoint can sign.',
    };
  }
  if (stored !== undefined) {
    return {
      source: 'settings' as const,
      note:
        'The master secret was generated for a demo (WSOPS_SECRET unset) and is stored in the settings table; it was copied with them, so the new database works as it is while WSOPS_SECRET stays unset. ' +
        'A live deployment (WSOPS_ENV=live) must set WSOPS_SECRET to that same value, or no endpoint can sign and no cursor stays valid: ' +
        (shown
          ? 'it is printed below (WSOPS_SECRET=…): keep it in your secret store, then delete the settings row `server_secret`.'
          : "read it with `SELECT value FROM settings WHERE name = 'server_secret'` (or copy with --show-secret), keep it in your secret store, then delete that row."),
    };
  }
  return {
    source: 'none' as const,
    note: 'No master secret was ever used by the source (no endpoint secret is sealed): nothing to carry over.',
  };
}

/** Every literal form of the URL's password, to strike from an error message before printing it. */
function passwordsOf(url: string): string[] {
  try {
    const u = new URL(url);
    const found = [u.password, decodeURIComponent(u.password), u.searchParams.get('password') ?? ''];
    return found.filter((p) => p.length > 0);
  } catch {
    return [];
  }
}

/**
 * The target's address: from `--to`, from standard input (`--to -`) or from an environment
 * variable (`--to-env NAME`). The address carries the target's password; on the command line
 * every user of the machine sees it in `ps`, and it stays in the shell's history.
 */
async function targetAddress(opts: { to?: string; toEnv?: string }): Promise<string> {
  if (opts.to !== undefined && opts.toEnv !== undefined) {
    throw new UsageError('give the target either as --to or as --to-env NAME, not both');
  }
  if (opts.toEnv !== undefined) {
    const value = process.env[opts.toEnv]?.trim() ?? '';
    if (value === '') {
      throw new UsageError(
        `--to-env ${opts.toEnv}: the environment variable ${opts.toEnv} is not set or empty; export it with the target's address (sqlite:PATH or postgres://...)`,
      );
    }
    return value;
  }
  if (opts.to === undefined) {
    throw new UsageError(
      '--to is required: the empty target database (sqlite:PATH or postgres://...); --to - reads it from standard input, --to-env NAME from an environment variable',
    );
  }
  return secretArgument('--to', opts.to);
}

export function copyCommand(program: Command): void {
  program
    .command('copy')
    .description(
      'copy this whole deployment (WSOPS_DATABASE_URL) into a new, empty database of either dialect: stop the server first (README, "Moving from SQLite to PostgreSQL")',
    )
    .option(
      '--to <url>',
      'the empty target database: sqlite:PATH or postgres://USER:PASSWORD@HOST:PORT/DB; - reads it from standard input, out of ps and the shell history',
    )
    .option('--to-env <name>', 'read the target address from this environment variable instead of --to (out of ps)')
    .option('--batch-size <rows>', `rows read and written per batch (default ${DEFAULT_BATCH_ROWS})`)
    .option('--show-secret', 'also print the master secret stored in the settings table (generated for a demo), to set WSOPS_SECRET')
    .option('--json', 'machine output')
    .action(async (opts: { to?: string; toEnv?: string; batchSize?: string; showSecret?: boolean; json?: boolean }) => {
      const config = loadConfig();
      const to = checkDatabaseUrl(opts.toEnv ?? '--to', await targetAddress(opts));
      if (to === config.databaseUrl) {
        throw new UsageError('--to names the configured database (WSOPS_DATABASE_URL); give the address of a new, empty database');
      }
      const batchRows = opts.batchSize === undefined ? DEFAULT_BATCH_ROWS : parsePositiveInt('--batch-size', opts.batchSize, 100_000);
      const from = redactUrl(config.databaseUrl);
      const into = redactUrl(to);
      if (isVerbose()) process.stderr.write(`source: ${describeDatabase(config.databaseUrl)}\ntarget: ${describeDatabase(to)}\n`);
      const source = openDatabase(config.databaseUrl);
      const target = openDatabase(to);
      let bar: ReturnType<typeof progressBar> | undefined;
      let barTable = '';
      const started = performance.now();
      try {
        const result = await copyDeployment(source, target, {
          batchRows,
          progress(table, done, total) {
            if (table !== barTable) {
              bar?.finish();
              bar = progressBar(`copy ${table.padEnd(22)}`);
              barTable = table;
            }
            bar?.(done, total);
          },
        });
        bar?.finish();
        const seconds = (performance.now() - started) / 1000;
        const secret = masterSecretNote(config.secret, result.storedServerSecret, !!opts.showSecret);
        const shown = opts.showSecret && secret.source === 'settings' ? { value: result.storedServerSecret } : {};
        print(
          !!opts.json,
          {
            source: from,
            target: into,
            tables: Object.fromEntries(result.tables.map((t) => [t.table, t.rows])),
            total_rows: result.totalRows,
            verified: true,
            seconds: Number(seconds.toFixed(3)),
            master_secret: { source: secret.source, note: secret.note, ...shown },
          },
          () =>
            [
              `copied ${result.totalRows} rows from ${from} to ${into} in ${seconds.toFixed(1)} s; the counts of every table match`,
              ...result.tables.map((t) => `  ${t.table.padEnd(24)} ${String(t.rows).padStart(10)}`),
              secret.note,
              ...(shown.value ? [`WSOPS_SECRET=${shown.value}`] : []),
              `Next: set WSOPS_DATABASE_URL to ${into} and start wsops.`,
            ].join('\n'),
        );
      } catch (err) {
        bar?.finish();
        // Refusals (a target not empty, a wrong argument) are one line and exit 2, as everywhere.
        if (err instanceof AppError || err instanceof UsageError || err instanceof ConfigError) throw err;
        // Anything else (a failed verification, connection refused, a full disk) is one line
        // and exit 1, without the target's password however the driver worded it.
        let message = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ');
        for (const p of passwordsOf(to)) message = message.split(p).join('***');
        process.stderr.write(`wsops: copy failed: ${message}\n`);
        process.exitCode = 1;
      } finally {
        await source.close().catch(() => {});
        await target.close().catch(() => {});
      }
    });
}
