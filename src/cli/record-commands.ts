import type { Command } from 'commander';
import { correctRecord, deleteRecord } from '../actions/correct.js';
import { parsePositiveInt, print } from '../cli-kit/output.js';
import { seedWorkspace } from '../seed/seed.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { withServices } from './context.js';
import { progressBar } from './progress.js';

export function recordCommands(program: Command): void {
  program
    .command('seed')
    .description('write deterministic, realistic demo data for every register')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--scale <n>', 'multiply the amount of data (1 is a small complete picture)', '1')
    .option('--seed <text>', 'seed of the generator: same seed, same data', 'wsops')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; scale: string; seed: string; json?: boolean }) => {
      const scale = parsePositiveInt('--scale', opts.scale, 100_000);
      const bar = progressBar('seeding');
      const result = await withServices(async (s) => {
        await getWorkspace(s.database.db, opts.workspace);
        return seedWorkspace(s, opts.workspace, { scale, seed: opts.seed, now: s.clock(), onProgress: bar });
      });
      bar.finish();
      print(!!opts.json, result, () =>
        [`seeded ${result.total} records:`, ...Object.entries(result.counts).map(([k, v]) => `  ${k.padEnd(22)} ${v}`)].join('\n'),
      );
    });

  program
    .command('correct')
    .description('direct correction of a record: moves updated_at, sends no event')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<register>', 'register name, e.g. vendors')
    .argument('<id>', 'record id')
    .argument('<assignments...>', 'field=value pairs (numbers, true/false, null, JSON for lists)')
    .option('--json', 'machine output')
    .action(async (register: string, id: string, assignments: string[], opts: { workspace: string; json?: boolean }) => {
      const updated = await withServices((s) => correctRecord(s, opts.workspace, register, id, assignments));
      print(!!opts.json, updated, () => `corrected ${id}; updated_at is now ${updated.updated_at}`);
    });

  program
    .command('delete')
    .description('remove a record: it leaves every list, no event is sent, and its id enters the deletions feed')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<register>', 'register name, e.g. assets')
    .argument('<id>', 'record id')
    .option('--json', 'machine output')
    .action(async (register: string, id: string, opts: { workspace: string; json?: boolean }) => {
      await withServices((s) => deleteRecord(s, opts.workspace, register, id));
      print(!!opts.json, { id, deleted: true }, () => `deleted ${id}`);
    });
}
