/**
 * `wsops import` and `wsops export`: the system of record's bulk writes from a shell (contract:
 * "System of record writes"). The import reads NDJSON operations, or a CSV file of one register
 * (`--register`), from a file or standard input and prints the report: counts per register and
 * each refused line with its number, pointer and reason; it exits 2 when any line was refused.
 * The export writes the same NDJSON, so `wsops export | wsops import --keep-timestamps -` moves
 * a workspace between deployments or databases.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { chmod, open, rename, rm } from 'node:fs/promises';
import type { Command } from 'commander';
import { EXIT_USAGE, table, UsageError } from '../cli-kit/output.js';
import { resolveRegister } from '../registers/resolve-register.js';
import { printable } from '../text-rules.js';
import { csvOperations } from '../writes/csv-operations.js';
import { exportRecords, exportRegisters } from '../writes/export.js';
import { ATOMIC_MAX_LINES, type ImportReport, importRecords } from '../writes/import.js';
import { referrerLines } from '../writes/referrers.js';
import { withServices } from './context.js';
import { lineCounter } from './progress.js';

interface ImportOptions {
  workspace: string;
  register?: string;
  dryRun?: boolean;
  atomic?: boolean;
  keepTimestamps?: boolean;
  json?: boolean;
}

/** The file's bytes, or standard input for `-`; a file that cannot be opened is a one-line refusal. */
async function openSource(file: string): Promise<AsyncIterable<Buffer>> {
  if (file === '-') return process.stdin;
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    throw new UsageError(`cannot read ${printable(file)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw new UsageError(`${printable(file)} is not a file`);
  }
  return handle.createReadStream();
}

/** The report for a person: what happened, counts per register, then every listed refusal with its line. */
export function importSummary(report: ImportReport): string {
  const lines = count(report.lines, 'line');
  const refused = report.refused_count;
  const what = report.dry_run
    ? `dry run of ${lines}: nothing was written${refused ? `; ${count(refused, 'line')} would be refused` : ''}`
    : report.committed
      ? `imported ${lines} into ${report.workspace_id}${refused ? `: ${applied(report)} applied, ${refused} refused` : ''}`
      : report.atomic
        ? `atomic import of ${lines} refused as a whole: nothing was written`
        : `import of ${lines} into ${report.workspace_id} stopped`;
  const rows = Object.entries(report.counts).map(([register, c]) => ({
    register,
    created: c.upsert.created,
    updated: c.upsert.updated,
    unchanged: c.upsert.unchanged,
    deleted: c.delete.deleted,
    absent: c.delete.absent,
    refused: c.refused,
  }));
  const out = [what];
  if (rows.length) out.push(table(rows, ['register', 'created', 'updated', 'unchanged', 'deleted', 'absent', 'refused']));
  if (refused > 0) {
    out.push(`${count(refused, 'line')} refused:`);
    // In line order (a line that waited for a later reference is refused at the end); a line
    // with several faults has one row for each.
    for (const r of [...report.refused].sort((a, b) => a.line - b.line)) {
      out.push(printable(`line ${r.line}${r.pointer ? ` ${r.pointer}` : ''} ${r.code}: ${r.detail}`));
      for (const named of referrerLines(r.referrers ?? [])) out.push(printable(`  still named by ${named}`));
    }
    if (report.refused_truncated) {
      const unlisted = refused - new Set(report.refused.map((r) => r.line)).size;
      out.push(`(${count(unlisted, 'more refused line')} counted but not listed)`);
    }
  }
  if (report.repeated_count > 0) {
    out.push(`${count(report.repeated_count, 'line')} wrote an id again (each applied: the last line for an id wins):`);
    for (const r of report.repeated) out.push(printable(`line ${r.line} ${r.id}: first written at line ${r.first_line}`));
    if (report.repeated_count > report.repeated.length)
      out.push(`(${report.repeated_count - report.repeated.length} more counted but not listed)`);
  }
  return out.join('\n');
}

/** Operations that took effect or found nothing to do (every count but the refusals). */
const applied = (report: ImportReport): number =>
  Object.values(report.counts).reduce(
    (sum, c) => sum + c.upsert.created + c.upsert.updated + c.upsert.unchanged + c.delete.deleted + c.delete.absent,
    0,
  );

/** "1 line", "3 lines". */
const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

export function dataCommands(program: Command): void {
  program
    .command('import')
    .description('load records: NDJSON operations, or a CSV file of one register (direct writes: updated_at moves, no event)')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<file>', 'an NDJSON file (or CSV with --register), or - for standard input')
    .option('--register <name>', 'the file is CSV of this register: the first row names the fields, lists are JSON in a cell')
    .option('--dry-run', 'check every line and report, write nothing')
    .option('--atomic', `all or nothing: one transaction (at most ${ATOMIC_MAX_LINES} lines)`)
    .option('--keep-timestamps', "keep each record's created_at and updated_at as given (moving a workspace)")
    .option('--json', 'print the import report as JSON')
    .action(async (file: string, opts: ImportOptions) => {
      const register = opts.register === undefined ? undefined : resolveRegister(opts.register);
      if (!register && /\.csv$/i.test(file)) throw new UsageError(`${printable(file)} looks like CSV: name its register with --register`);
      const bytes = await openSource(file);
      const source = register ? csvOperations(bytes, register) : bytes;
      const progress = lineCounter(opts.dryRun ? 'checking' : 'importing');
      const report = await withServices((s) =>
        importRecords(s, opts.workspace, source, {
          actor: 'cli',
          atomic: !!opts.atomic,
          dryRun: !!opts.dryRun,
          keepTimestamps: !!opts.keepTimestamps,
          onProgress: ({ lines, refused }) => progress(lines, refused),
        }),
      ).finally(() => progress.finish());
      process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${importSummary(report)}\n`);
      if (report.refused_count > 0) process.exitCode = EXIT_USAGE;
    });

  program
    .command('export')
    .description("write a workspace's records as NDJSON upsert operations (what wsops import reads)")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--registers <list>', 'comma-separated registers (default: all, parents first)')
    .option('--output <file>', 'write to this file instead of standard output')
    .action(async (opts: { workspace: string; registers?: string; output?: string }) => {
      const registers = exportRegisters(
        opts.registers
          ?.split(',')
          .map((r) => r.trim())
          .filter(Boolean),
      );
      await withServices(async (s) => {
        const chunks = exportRecords(s, opts.workspace, registers);
        if (!opts.output) {
          // A reader that stops early (`| head`) ends the export quietly, as for any Unix tool.
          await writeAll(chunks, process.stdout).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'EPIPE') throw err;
          });
          return;
        }
        // Written beside the file and renamed at the end: a failed export leaves no half file behind.
        // It holds the workspace's records: readable by its owner only, whatever the umask.
        const partial = `${opts.output}.${process.pid}.partial`;
        const out = createWriteStream(partial, { flags: 'wx', mode: 0o600 });
        try {
          await once(out, 'open');
          await chmod(partial, 0o600);
          const records = await writeAll(chunks, out);
          out.end();
          await once(out, 'close');
          await rename(partial, opts.output);
          process.stdout.write(`exported ${records} records to ${printable(opts.output)}\n`);
        } catch (err) {
          out.destroy();
          await rm(partial, { force: true });
          throw err;
        }
      });
    });
}

/** Writes every chunk, waiting when the stream is full; returns the number of lines. */
async function writeAll(chunks: AsyncIterable<string>, out: NodeJS.WritableStream): Promise<number> {
  let lines = 0;
  let failure: Error | undefined;
  const onError = (err: Error) => {
    failure = err;
  };
  out.on('error', onError);
  try {
    for await (const chunk of chunks) {
      if (failure) throw failure;
      for (let i = chunk.indexOf('\n'); i !== -1; i = chunk.indexOf('\n', i + 1)) lines++;
      if (!out.write(chunk)) await Promise.race([once(out, 'drain'), once(out, 'error')]);
    }
    if (failure) throw failure;
  } finally {
    out.off('error', onError);
  }
  return lines;
}
