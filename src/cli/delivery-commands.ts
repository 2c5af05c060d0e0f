/**
 * `wsops deliveries`: the delivery history as attempts (the contract's shape, unchanged), and
 * its subcommands `resend` and `recover`. Commander hands options written after a subcommand's
 * name to the parent first when the parent knows them, so `--workspace`, `--endpoint` and
 * `--json` are read from the merged options (optsWithGlobals) and checked here.
 */
import type { Command } from 'commander';
import { print, table, UsageError } from '../cli-kit/output.js';
import { errorClassHelp } from '../webhooks/destinations/error-classes.js';
import { type DeliveriesServices, recoverFailed, resendDelivery } from '../webhooks/queue/deliveries.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { withServices } from './context.js';

interface DeliveriesOptions {
  workspace?: string;
  endpoint?: string;
  limit: string;
  json?: boolean;
  since?: string;
}

async function inWorkspace<T>(workspaceId: string, fn: (s: DeliveriesServices) => Promise<T>): Promise<T> {
  return withServices(async (s) => {
    await getWorkspace(s.database.db, workspaceId);
    return fn(s);
  });
}

function required(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`required option '${flag}' not specified`);
  return value;
}

/** The last failure of each endpoint with a url_refused attempt in the list: it names the rule that refused. */
async function refusedEndpointsLastFailure(
  s: DeliveriesServices,
  workspace: string,
  rows: readonly { endpoint_id: string; error_class: string | null }[],
): Promise<Map<string, string>> {
  const ids = [...new Set(rows.filter((r) => r.error_class === 'url_refused').map((r) => r.endpoint_id))];
  if (ids.length === 0) return new Map();
  const endpoints = await s.database.db
    .selectFrom('webhook_endpoints')
    .select(['id', 'last_failure'])
    .where('workspace_id', '=', workspace)
    .where('id', 'in', ids)
    .execute();
  return new Map(endpoints.filter((e) => e.last_failure !== null).map((e) => [e.id, e.last_failure as string]));
}

/** One line per error class shown in the table, saying what it means; for url_refused, the rule that refused each endpoint. */
function errorNotes(rows: readonly { error_class: string | null }[], lastFailures: ReadonlyMap<string, string>): string[] {
  const classes = [...new Set(rows.map((r) => r.error_class).filter((c): c is string => c !== null))];
  if (classes.length === 0) return [];
  const notes = ['', ...classes.map((c) => `${c}: ${errorClassHelp(c) ?? "see the endpoint's last failure"}`)];
  for (const [id, failure] of lastFailures) notes.push(`${id} last failure: ${failure}`);
  return notes;
}

export function deliveryCommands(program: Command): void {
  const deliveries = program
    .command('deliveries')
    .description('delivery history: each attempt, its outcome, the next attempt time (subcommands: resend, recover)')
    .option('--workspace <id>', 'workspace id (required)')
    .option('--endpoint <id>', 'only this endpoint')
    .option('--limit <n>', 'most recent attempts to show', '100')
    .option('--json', 'machine output')
    .action(async (opts: DeliveriesOptions) => {
      const workspace = required(opts.workspace, '--workspace <id>');
      if (!/^\d+$/.test(opts.limit) || Number(opts.limit) < 1 || Number(opts.limit) > 10_000) {
        throw new UsageError(`--limit must be a whole number from 1 to 10000; got "${opts.limit}"`);
      }
      let lastFailures = new Map<string, string>();
      const rows = await inWorkspace(workspace, async (s) => {
        let q = s.database.db
          .selectFrom('delivery_attempts')
          .select([
            'id as delivery_id',
            'event_id',
            'event_type',
            'endpoint_id',
            'attempt',
            'status_code',
            'outcome',
            'error_class',
            'latency_ms',
            'attempted_at',
            'next_attempt_at',
            'response_body',
          ])
          .where('workspace_id', '=', workspace);
        if (opts.endpoint) q = q.where('endpoint_id', '=', opts.endpoint);
        const attempts = await q.orderBy('attempted_at', 'desc').orderBy('attempt', 'desc').limit(Number(opts.limit)).execute();
        lastFailures = await refusedEndpointsLastFailure(s, workspace, attempts);
        return attempts;
      });
      print(!!opts.json, rows, () =>
        [
          table(rows, [
            'attempted_at',
            'delivery_id',
            'event_type',
            'endpoint_id',
            'attempt',
            'outcome',
            'status_code',
            'error_class',
            'next_attempt_at',
          ]),
          ...errorNotes(rows, lastFailures),
        ].join('\n'),
      );
    });

  deliveries
    .command('resend')
    .description('attempt one delivery again now: a new delivery id, the same event id (refused while the endpoint is disabled)')
    .option('--workspace <id>', 'workspace id (required)')
    .option('--endpoint <id>', 'endpoint id (required)')
    .option('--json', 'machine output')
    .argument('<delivery_id>', 'a delivery id (dlv_…) from wsops deliveries, or its job id')
    .action(async (deliveryId: string, _opts: DeliveriesOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<DeliveriesOptions>();
      const workspace = required(opts.workspace, '--workspace <id>');
      const endpoint = required(opts.endpoint, '--endpoint <id>');
      const resent = await inWorkspace(workspace, (s) => resendDelivery(s, workspace, endpoint, deliveryId));
      print(
        !!opts.json,
        resent,
        () => `event ${resent.event_id} (${resent.event_type}) is due again now for ${endpoint}; a worker makes the new attempt.`,
      );
    });

  deliveries
    .command('recover')
    .description('attempt again every delivery of the endpoint that spent all its attempts, for events since a time')
    .option('--workspace <id>', 'workspace id (required)')
    .option('--endpoint <id>', 'endpoint id (required)')
    .requiredOption('--since <time>', 'ISO 8601 date and time, e.g. 2026-11-21T08:00:00Z')
    .option('--json', 'machine output')
    .action(async (_opts: DeliveriesOptions, cmd: Command) => {
      const opts = cmd.optsWithGlobals<DeliveriesOptions>();
      const workspace = required(opts.workspace, '--workspace <id>');
      const endpoint = required(opts.endpoint, '--endpoint <id>');
      const since = required(opts.since, '--since <time>');
      const result = await inWorkspace(workspace, (s) => recoverFailed(s, workspace, endpoint, since));
      print(!!opts.json, result, () => `${result.recovered} failed deliveries since ${result.since} are due again now.`);
    });
}
