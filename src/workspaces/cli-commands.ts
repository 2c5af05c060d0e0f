import type { Command } from 'commander';
import { print, table } from '../cli-kit/output.js';
import { withDatabase } from '../cli-kit/with-database.js';
import { iso } from '../clock.js';
import { createWorkspace, listWorkspaces, parseModules, setModule } from './workspaces.js';

export function workspaceCommands(program: Command): void {
  const ws = program.command('workspace').description('create and list workspaces');
  ws.command('create')
    .description('create a workspace')
    .requiredOption('--name <name>', 'workspace name')
    .option('--modules <spec>', 'all, or a comma-separated list of optional modules', 'all')
    .option('--json', 'machine output')
    .action(async (opts: { name: string; modules: string; json?: boolean }) => {
      const modules = parseModules(opts.modules);
      const created = await withDatabase((s) => createWorkspace(s.database.db, opts.name, modules, iso(s.clock())));
      print(!!opts.json, created, () => `created workspace ${created.id} (${created.name}) with modules ${created.modules.join(', ')}`);
    });
  ws.command('list')
    .description('list workspaces')
    .option('--json', 'machine output')
    .action(async (opts: { json?: boolean }) => {
      const all = await withDatabase((s) => listWorkspaces(s.database.db));
      print(!!opts.json, all, () => table(all, ['id', 'name', 'modules', 'created_at']));
    });

  const mod = program.command('module').description('install or uninstall an optional module');
  for (const verb of ['install', 'uninstall'] as const) {
    mod
      .command(verb)
      .description(`${verb} a module in a workspace`)
      .requiredOption('--workspace <id>', 'workspace id')
      .argument('<module>', 'module name')
      .option('--json', 'machine output')
      .action(async (module: string, opts: { workspace: string; json?: boolean }) => {
        const updated = await withDatabase((s) => setModule(s.database.db, opts.workspace, module, verb === 'install', iso(s.clock())));
        print(!!opts.json, updated, () => `${module} ${verb}ed; installed modules: ${updated.modules.join(', ')}`);
      });
  }
}
