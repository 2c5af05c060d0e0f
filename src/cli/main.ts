import { Command, CommanderError } from 'commander';
import { onDatabase, setVerbose } from '../cli-kit/database-target.js';
import { loadEnvFile } from '../cli-kit/env-file.js';
import { EXIT_USAGE, print, reportFailure } from '../cli-kit/output.js';
import { loadConfig } from '../config.js';
import { printable, refuseControlCharacters } from '../text-rules.js';

type Define = (program: Command) => void;

/**
 * Each group of commands lives in its own module, loaded only when one of its commands runs:
 * loading them all (fastify, ajv's register validators, the seed) slowed start-up (ADR 21),
 * which every `wsops key create` in an operator's script paid. A command not named here (or
 * none, or --help) loads every group; the top-level --help is printed from the text
 * the build saved (bin/wsops), so it loads none.
 */
const GROUPS: readonly (readonly [names: readonly string[], load: () => Promise<Define>])[] = [
  [['serve'], async () => (await import('./serve-command.js')).serveCommand],
  [['migrate'], async () => migrateCommand],
  [['workspace', 'module'], async () => (await import('../workspaces/cli-commands.js')).workspaceCommands],
  [['key'], async () => (await import('../keys/cli-commands.js')).keyCommands],
  [['scim'], async () => (await import('../scim/cli-commands.js')).scimCommands],
  [['seed', 'correct', 'delete'], async () => (await import('./record-commands.js')).recordCommands],
  [['import', 'export'], async () => (await import('./data-commands.js')).dataCommands],
  [['imports'], async () => (await import('./imports-command.js')).importsCommand],
  [['copy'], async () => (await import('./copy-command.js')).copyCommand],
  [['act'], async () => (await import('./act-command.js')).actCommand],
  [['endpoint', 'renewals'], async () => (await import('./endpoint-commands.js')).endpointCommands],
  [['admin'], async () => (await import('../sign-in/cli-commands.js')).adminCommands],
  [['alerts'], async () => (await import('../alerts/cli-commands.js')).alertCommands],
  [['sso'], async () => (await import('./sso-commands.js')).ssoCommands],
  [['deliveries'], async () => (await import('./delivery-commands.js')).deliveryCommands],
  [['listen'], async () => (await import('./listen-command.js')).listenCommand],
  [['audit'], async () => (await import('./audit-command.js')).auditCommand],
  [['openapi'], async () => openapiCommand],
  [['status'], async () => (await import('./status-command.js')).statusCommand],
];

const program = new Command('wsops')
  .description('wsops: workspace-operations read API, webhooks and operator tools')
  .showHelpAfterError(false)
  .exitOverride()
  .configureOutput({
    // Commander's own usage errors become one line and exit 2, like every other refusal.
    outputError: (text, write) => write(`wsops: ${text.replace(/^error: /, '').trim()}\n`),
  })
  // Global: accepted before or after the command's name, by every command, and listed in each one's --help.
  .configureHelp({ showGlobalOptions: true })
  .option('--verbose', 'name the database the command works on (on stderr)')
  .hook('preAction', (_program, command) => setVerbose(!!command.optsWithGlobals().verbose));

function migrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations (and create an empty database)')
    .option('--json', 'machine output')
    .addHelpText(
      'after',
      `
Why: every command, \`wsops serve\` included, applies pending migrations itself before it
starts (several at once are safe: they take a lock), so on one machine you never need this. It
exists for deploys: run it once, as its own step, before the new version starts anywhere, so a
long or failing migration shows up there with its error instead of delaying or stopping every
server process. It also creates the default SQLite database, which other commands refuse to
create while WSOPS_DATABASE_URL is unset. \`wsops status\` lists applied and pending migrations.`,
    )
    .action(async (opts: { json?: boolean }) => {
      const { openDatabase } = await import('../store/database.js');
      const { migrate } = await import('../store/migrate.js');
      const url = loadConfig().databaseUrl;
      const applied = await onDatabase(
        url,
        async () => {
          const database = openDatabase(url);
          try {
            return await migrate(database);
          } finally {
            await database.close();
          }
        },
        { create: true },
      );
      print(!!opts.json, { applied }, () => (applied.length ? `applied ${applied.join(', ')}` : 'database is up to date'));
    });
}

function openapiCommand(program: Command): void {
  program
    .command('openapi')
    .description('print the OpenAPI document of /api/v1 (or, with --internal, of the internal write API)')
    .option('--internal', "the internal listener's document: record writes, import, export, domain actions, health")
    .action(async (opts: { internal?: boolean }) => {
      const doc = opts.internal
        ? (await import('../developers/internal-openapi.js')).buildInternalOpenApi(loadConfig().baseUrl)
        : (await import('../developers/openapi.js')).buildOpenApi(loadConfig().baseUrl);
      process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    });
}

// The command's name is the first argument that is not an option (`wsops --verbose key list`).
const name = process.argv.slice(2).find((arg) => !arg.startsWith('-')) ?? '';
const named = GROUPS.find(([names]) => names.includes(name));
const defines = await Promise.all((named ? [named] : GROUPS).map(([, load]) => load()));
for (const define of defines) define(program);

// Every subcommand refuses unknown options and extra arguments.
for (const cmd of program.commands) {
  cmd.exitOverride();
  for (const sub of cmd.commands) sub.exitOverride();
}

try {
  // No argument holds a control character (text-rules.ts): refused before any query.
  for (const arg of process.argv.slice(2)) refuseControlCharacters(arg, `the argument "${printable(arg.slice(0, 60))}"`);
  // Before any setting is read; a variable already in the environment wins (src/cli-kit/env-file.ts).
  loadEnvFile();
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') process.exit(0);
    process.exit(EXIT_USAGE);
  }
  process.exit(reportFailure(err));
}
