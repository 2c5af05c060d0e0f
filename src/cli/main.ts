import { Command, CommanderError } from 'commander';
import { buildInternalOpenApi } from '../api/internal-openapi.js';
import { buildOpenApi } from '../api/openapi.js';
import { loadConfig } from '../config.js';
import { openDatabase } from '../store/database.js';
import { migrate } from '../store/migrations.js';
import { printable, refuseControlCharacters } from '../text-rules.js';
import { actCommand } from './act-command.js';
import { adminCommands } from './admin-commands.js';
import { auditCommand } from './audit-command.js';
import { copyCommand } from './copy-command.js';
import { dataCommands } from './data-commands.js';
import { deliveryCommands } from './delivery-commands.js';
import { endpointCommands } from './endpoint-commands.js';
import { keyCommands } from './key-commands.js';
import { EXIT_USAGE, print, reportFailure } from './output.js';
import { recordCommands } from './record-commands.js';
import { serveCommand } from './serve-command.js';
import { workspaceCommands } from './workspace-commands.js';

const program = new Command('wsops')
  .description('wsops: workspace-operations read API, webhooks and operator tools')
  .showHelpAfterError(false)
  .exitOverride()
  .configureOutput({
    // Commander's own usage errors become one line and exit 2, like every other refusal.
    outputError: (text, write) => write(`wsops: ${text.replace(/^error: /, '').trim()}\n`),
  });

serveCommand(program);
program
  .command('migrate')
  .description('apply pending database migrations')
  .option('--json', 'machine output')
  .action(async (opts: { json?: boolean }) => {
    const database = openDatabase(loadConfig().databaseUrl);
    try {
      const applied = await migrate(database);
      print(!!opts.json, { applied }, () => (applied.length ? `applied ${applied.join(', ')}` : 'database is up to date'));
    } finally {
      await database.close();
    }
  });
workspaceCommands(program);
keyCommands(program);
recordCommands(program);
dataCommands(program);
actCommand(program);
endpointCommands(program);
adminCommands(program);
deliveryCommands(program);
auditCommand(program);
copyCommand(program);
program
  .command('openapi')
  .description('print the OpenAPI document of /api/v1 (or, with --internal, of the internal write API)')
  .option('--internal', "the internal listener's document: record writes, import, export")
  .action((opts: { internal?: boolean }) => {
    const doc = opts.internal ? buildInternalOpenApi() : buildOpenApi(loadConfig().baseUrl);
    process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
  });

// Every subcommand refuses unknown options and extra arguments.
for (const cmd of program.commands) {
  cmd.exitOverride();
  for (const sub of cmd.commands) sub.exitOverride();
}

try {
  // No argument holds a control character (text-rules.ts): refused before any query.
  for (const arg of process.argv.slice(2)) refuseControlCharacters(arg, `the argument "${printable(arg.slice(0, 60))}"`);
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') process.exit(0);
    process.exit(EXIT_USAGE);
  }
  process.exit(reportFailure(err));
}
