/**
 * `wsops imports`: a workspace's latest imports and what became of each, as the console's Data
 * page lists them. An import whose process is gone (killed mid-way) is marked interrupted, with
 * the lines its committed batches had applied, before the list is read.
 */
import type { Command } from 'commander';
import { parsePositiveInt, print, table } from '../cli-kit/output.js';
import { withDatabase } from '../cli-kit/with-database.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { recentImports } from '../writes/import-runs.js';

export function importsCommand(program: Command): void {
  program
    .command('imports')
    .description("a workspace's latest imports, newest first: running, imported, failed or interrupted (its process gone), lines applied")
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--limit <n>', 'how many (default 20)')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; limit?: string; json?: boolean }) => {
      const limit = opts.limit === undefined ? 20 : parsePositiveInt('--limit', opts.limit, 1000);
      await withDatabase(async ({ database, clock }) => {
        await getWorkspace(database.db, opts.workspace);
        const imports = await recentImports(database.db, opts.workspace, clock(), limit);
        const rows = imports.map((i) => ({
          id: i.id,
          state: i.state,
          started_at: i.started_at,
          finished_at: i.finished_at,
          actor: i.actor,
          dry_run: !!i.dry_run,
          lines: i.lines,
          refused: i.refused,
          counts: i.report.counts ?? {},
          ...(i.report.failure ? { note: i.report.failure } : {}),
        }));
        print(!!opts.json, rows, () => {
          const notes = rows.filter((r) => r.note).map((r) => `${r.id}: ${r.note}`);
          return [table(rows, ['id', 'state', 'started_at', 'lines', 'refused', 'actor']), ...notes].join('\n');
        });
      });
    });
}
