import { type Command, Option } from 'commander';
import { ACTION_NAMES, ACTIONS, type OptionSpec } from '../actions/domain/index.js';
import { print, UsageError } from '../cli-kit/output.js';
import { registerById } from '../registers/catalogue.js';
import { withServices } from './context.js';

/** Commander's attribute name of a flag: `expected_return` is `--expected-return`, read as `expectedReturn`. */
function attribute(name: string): string {
  return name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

function flag(option: OptionSpec): string {
  return `--${option.name.replace(/_/g, '-')}`;
}

/** Every action's options, once each (the same name means the same argument in every action). */
function allOptions(): OptionSpec[] {
  const seen = new Map<string, OptionSpec>();
  for (const action of Object.values(ACTIONS)) for (const o of action.options) if (!seen.has(o.name)) seen.set(o.name, o);
  return [...seen.values()];
}

function usage(): string {
  return [
    '',
    'Actions:',
    ...Object.values(ACTIONS).flatMap((a) => [
      `  ${a.name} ${a.options.map((o) => (o.required ? `${flag(o)} ${o.placeholder}` : `[${flag(o)} ${o.placeholder}]`)).join(' ')}`,
      `      ${a.description}`,
    ]),
  ].join('\n');
}

/**
 * `wsops act ACTION --workspace W [args] [--json]`: runs one domain action in one transaction;
 * prints the changed records and the ids of the events emitted. Unknown actions, arguments the
 * action does not take, malformed values and refused states print one line and exit 2.
 */
export function actCommand(program: Command): void {
  const cmd = program
    .command('act')
    .description('run a domain action: it updates the registers and emits its event')
    .argument('<action>', `one of ${ACTION_NAMES.join(', ')}`)
    .requiredOption('--workspace <id>', 'workspace id');
  for (const o of allOptions()) {
    cmd.addOption(new Option(`${flag(o)} ${o.placeholder}`, o.description));
  }
  cmd
    .option('--json', 'machine output: {"records": [...], "events": [...]}')
    .addHelpText('after', usage())
    .action(async (name: string, opts: Record<string, string | boolean | undefined>) => {
      const action = Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined;
      if (!action) throw new UsageError(`unknown action "${name}"; actions are: ${ACTION_NAMES.join(', ')}`);
      const args: Record<string, string> = {};
      for (const o of allOptions()) {
        const value = opts[attribute(o.name)];
        if (typeof value === 'string') args[o.name] = value;
      }
      const workspace = opts.workspace as string;
      const result = await withServices((s) => action.run(s, workspace, args, { actor: 'cli' }));
      print(!!opts.json, result, () =>
        [
          `${name}: wrote ${result.records.length} record(s), emitted ${result.events.length} event(s)`,
          ...result.records.map((r) => {
            const id = r.id as string;
            const register = registerById(id)?.path ?? '?';
            return `  ${register.padEnd(20)} ${id}${typeof r.status === 'string' ? `  ${r.status}` : ''}`;
          }),
          ...result.events.map((e) => `  event                ${e}`),
        ].join('\n'),
      );
    });
}
