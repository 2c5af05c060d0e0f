import type { Command } from 'commander';
import { print, table, UsageError } from '../cli-kit/output.js';
import { listAdmins } from '../sign-in/admins.js';
import { kindOf } from '../webhooks/destinations/address.js';
import { setEndpointFilter } from '../webhooks/endpoints/endpoint-filters.js';
import {
  createEndpoint,
  disableEndpoint,
  type EndpointsServices,
  type EndpointView,
  enableEndpoint,
  listEndpoints,
  rotateSecret,
  setStandardWebhooks,
  verifyEndpoint,
} from '../webhooks/endpoints/endpoints.js';
import { deliveryRefusalWarning } from '../webhooks/endpoints/served-url-policy.js';
import { checkRenewals } from '../webhooks/events/renewals.js';
import { sendTestEvent } from '../webhooks/queue/deliveries.js';
import { MAX_THROTTLE_PER_SECOND, parseThrottle, setThrottle } from '../webhooks/queue/throttle.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { withServices } from './context.js';

/**
 * The flags' defaults are a webhook's nothing: a default routing key or subject given to another
 * kind is dropped here, so only a flag the user typed for the wrong kind is refused.
 */
function destinationFlags(opts: { url: string; exchange?: string; routingKey?: string; subject?: string }) {
  const kind = kindOf(opts.url);
  return {
    exchange: opts.exchange,
    routingKey: kind === 'rabbitmq' || opts.routingKey !== '{type}' ? opts.routingKey : undefined,
    subject: kind === 'nats' || opts.subject !== 'wsops.{workspace}.{type}' ? opts.subject : undefined,
  };
}

function destinationNote(e: EndpointView): string {
  return e.kind === 'rabbitmq'
    ? `RabbitMQ destination ${e.url}: exchange ${e.exchange}, routing key ${e.routing_key}; the password is kept encrypted and never shown. It is verified when the broker confirms the verification message.`
    : `NATS JetStream destination ${e.url}: subject ${e.subject}; a stream must listen on it. It is verified when the stream acknowledges the verification message.`;
}

async function inWorkspace<T>(workspaceId: string, fn: (s: EndpointsServices) => Promise<T>): Promise<T> {
  return withServices(async (s) => {
    await getWorkspace(s.database.db, workspaceId);
    return fn(s);
  });
}

const FILTER_HELP =
  'only events whose webhook body matches this JSON filter are sent, e.g. \'{"data":{"purchase_request":{"amount_minor":{"$gt":100000}}}}\' (docs/guide/filters.md)';

export function endpointCommands(program: Command): void {
  const ep = program.command('endpoint').description('register and manage webhook endpoints');
  createCommand(ep);
  listCommand(ep);
  switchCommands(ep);
  rotateCommand(ep);
  throttleCommand(ep);
  signaturesCommand(ep);
  filterCommand(ep);
  testCommand(ep);
  renewalsCommands(program);
}

interface CreateOptions {
  workspace: string;
  url: string;
  scopes: string;
  events: string;
  standardWebhooks?: boolean;
  exchange?: string;
  routingKey?: string;
  subject?: string;
  filter?: string;
  json?: boolean;
}

function createCommand(ep: Command): void {
  ep.command('create')
    .description('register an endpoint; its signing secret is printed once; a verification event is sent')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption(
      '--url <url>',
      'https URL on port 443, reachable from the public internet (a receiver on this machine, for development: WSOPS_ALLOW_PRIVATE_WEBHOOKS=true for the server and this command; README, "Testing webhooks locally"); or a broker destination: amqps://USER:PASSWORD@HOST:PORT/VHOST (RabbitMQ) or tls://HOST:PORT (NATS JetStream); amqp:// and nats:// only where private webhooks are allowed (docs/guide/destinations.md)',
    )
    .requiredOption('--scopes <list>', 'comma-separated read scopes')
    .requiredOption('--events <list>', 'comma-separated event types')
    .option('--standard-webhooks', 'also send the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature)')
    // Event destinations (ADR 52): the kind's settings; refused for a URL of another kind.
    .option('--exchange <name>', 'RabbitMQ: the exchange the events are published to (required for amqps://)')
    .option('--routing-key <template>', 'RabbitMQ: routing key; placeholders {type}, {workspace}, {endpoint}', '{type}')
    .option('--subject <template>', 'NATS: subject; placeholders {type}, {workspace}, {endpoint}', 'wsops.{workspace}.{type}')
    .option('--filter <json>', FILTER_HELP)
    .option('--json', 'machine output')
    .action(async (opts: CreateOptions) => {
      const { created, warning, allowPrivate, alerted } = await registerEndpoint(opts);
      // `workspace create` makes no admin: say so where an operator first depends on the alerts.
      if (alerted === 0)
        process.stderr.write(
          `wsops: workspace ${opts.workspace} has no console admin and no alert recipient, so this endpoint's failure alerts (failing deliveries, an auto-disable) reach nobody; add one: wsops admin create --workspace ${opts.workspace} --email EMAIL (or wsops alerts recipients --workspace ${opts.workspace} --add EMAIL)\n`,
        );
      // verify checks the URL again: a command that needed the setting to register it needs it too.
      const setting = allowPrivate ? 'WSOPS_ALLOW_PRIVATE_WEBHOOKS=true ' : '';
      const verifyAgain = `${setting}wsops endpoint verify --workspace ${opts.workspace} ${created.id}`;
      if (warning)
        process.stderr.write(
          `wsops: ${warning}; then send the verification again, with the setting for that command too (or in .env): ${verifyAgain}\n`,
        );
      print(!!opts.json, created, () =>
        [
          `endpoint ${created.id} registered (${created.status}); a signed endpoint.verification was queued.`,
          ...(created.kind === 'https' ? [] : [destinationNote(created)]),
          `signing secret: ${created.secret}`,
          `The secret is shown only now; it signs every delivery (X-Service-Signature${created.standard_webhooks ? ', and webhook-signature for Standard Webhooks libraries' : ''}).`,
          'Events are delivered once the endpoint answers the verification with a 2xx; events before that are not delivered.',
          `If your receiver answered before it had the secret, send the verification again now: ${verifyAgain}`,
        ].join('\n'),
      );
    });
}

/** The registration, and what the command then warns of: a URL deliveries would be refused, nobody to alert. */
async function registerEndpoint(opts: CreateOptions) {
  return inWorkspace(opts.workspace, async (s) => {
    const created = await createEndpoint(s, opts.workspace, {
      ...opts,
      ...destinationFlags(opts),
      standardWebhooks: !!opts.standardWebhooks,
    });
    return {
      created,
      warning: await deliveryRefusalWarning(s, created.url),
      allowPrivate: s.config.allowPrivateWebhooks,
      // Failure alerts go to the console admins and the added recipients (src/alerts/recipients.ts).
      alerted:
        (await listAdmins(s.database.db, opts.workspace)).length +
        (await s.database.db.selectFrom('alert_recipients').select('email').where('workspace_id', '=', opts.workspace).execute()).length,
    };
  });
}

function listCommand(ep: Command): void {
  ep.command('list')
    .description('list endpoints (disabled ones stay listed)')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--json', 'machine output')
    .action(async (opts: { workspace: string; json?: boolean }) => {
      const all = await inWorkspace(opts.workspace, (s) => listEndpoints(s, opts.workspace));
      print(!!opts.json, all, () =>
        table(
          all.map((e) => ({ ...e, filter: e.filter ? JSON.stringify(e.filter) : null })),
          ['id', 'status', 'disabled_reason', 'url', 'events', 'consecutive_failures', 'max_per_second', 'standard_webhooks', 'filter'],
        ),
      );
    });
}

/** `endpoint disable`, `enable` and `verify`: one form (an endpoint id in, its status out), so one declaration. */
function switchCommands(ep: Command): void {
  const simple = [
    [
      'disable',
      'switch an endpoint off: deliveries stop at once and its slot is freed; those it owed are held, events raised while it is off are not sent to it',
      disableEndpoint,
    ],
    [
      'enable',
      'switch a disabled endpoint back on: it is re-verified, then held deliveries resume (after a disable for failures, they include the events raised meanwhile)',
      enableEndpoint,
    ],
    [
      'verify',
      'send the endpoint.verification again now, to an endpoint awaiting verification (e.g. its receiver answered the first before it had the secret)',
      verifyEndpoint,
    ],
  ] as const;
  for (const [name, description, fn] of simple) {
    ep.command(name)
      .description(description)
      .requiredOption('--workspace <id>', 'workspace id')
      .argument('<endpoint_id>', 'endpoint id')
      .option('--json', 'machine output')
      .action(async (id: string, opts: { workspace: string; json?: boolean }) => {
        const { result, warning } = await inWorkspace(opts.workspace, async (s) => {
          const result = await fn(s, opts.workspace, id);
          return { result, warning: name === 'disable' ? undefined : await deliveryRefusalWarning(s, result.url) };
        });
        if (warning) process.stderr.write(`wsops: ${warning}\n`);
        print(!!opts.json, result, () =>
          name === 'disable'
            ? result.disabled_reason === 'failures'
              ? `endpoint ${result.id} is already disabled after failures; its deliveries, and the events raised for it meanwhile, are held until it is switched on`
              : `endpoint ${result.id} is ${result.status}; the deliveries it owed are held until it is switched on; events raised while it is off are not sent to it (list them with GET /api/v1/events)`
            : `endpoint ${result.id} is ${result.status}; its signed endpoint.verification is due now (the one it still owed, sent again, or a new one; the running server sends it within seconds); it becomes active when the receiver answers with a 2xx.`,
        );
      });
  }
}

function rotateCommand(ep: Command): void {
  ep.command('rotate')
    .description('rotate the signing secret: the new one signs at once, the old one beside it for the grace period')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<endpoint_id>', 'endpoint id')
    .option('--grace-hours <n>', 'hours the old secret keeps signing (0 to 168)', '24')
    .option('--json', 'machine output')
    .action(async (id: string, opts: { workspace: string; graceHours: string; json?: boolean }) => {
      if (!/^\d+(\.\d+)?$/.test(opts.graceHours))
        throw new UsageError(`--grace-hours must be a number of hours from 0 to 168; got "${opts.graceHours}"`);
      const rotated = await inWorkspace(opts.workspace, (s) => rotateSecret(s, opts.workspace, id, Number(opts.graceHours)));
      print(!!opts.json, rotated, () => `new signing secret for ${rotated.id}: ${rotated.secret}\nThe secret is shown only now.`);
    });
}

function throttleCommand(ep: Command): void {
  ep.command('throttle')
    .description('cap the deliveries per second to one endpoint (throttled deliveries wait in the queue; never dropped, never failures)')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<endpoint_id>', 'endpoint id')
    .requiredOption('--max-per-second <n>', `deliveries per second, 1 to ${MAX_THROTTLE_PER_SECOND}, or "none" to remove the throttle`)
    .option('--json', 'machine output')
    .action(async (id: string, opts: { workspace: string; maxPerSecond: string; json?: boolean }) => {
      let rate: number | null;
      try {
        rate = parseThrottle(opts.maxPerSecond);
      } catch (err) {
        throw new UsageError(`--max-per-second: ${(err as Error).message}`);
      }
      const result = await inWorkspace(opts.workspace, (s) => setThrottle(s, opts.workspace, id, rate));
      print(!!opts.json, result, () =>
        result.max_per_second === null
          ? `endpoint ${id} is not throttled`
          : `endpoint ${id} is sent at most ${result.max_per_second} deliveries per second; the rest wait in the queue`,
      );
    });
}

function signaturesCommand(ep: Command): void {
  ep.command('signatures')
    .description('choose the signature headers: X-Service-Signature always, the Standard Webhooks headers beside it when on')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<endpoint_id>', 'endpoint id')
    .requiredOption(
      '--standard-webhooks <on|off>',
      'on: also send webhook-id, webhook-timestamp and webhook-signature; off: X-Service-Signature alone',
    )
    .option('--json', 'machine output')
    .action(async (id: string, opts: { workspace: string; standardWebhooks: string; json?: boolean }) => {
      const value = opts.standardWebhooks.trim().toLowerCase();
      if (value !== 'on' && value !== 'off')
        throw new UsageError(`--standard-webhooks must be "on" or "off"; got "${opts.standardWebhooks}"`);
      const result = await inWorkspace(opts.workspace, (s) => setStandardWebhooks(s, opts.workspace, id, value === 'on'));
      print(!!opts.json, result, () =>
        result.standard_webhooks
          ? `endpoint ${id} is sent X-Service-Signature and the Standard Webhooks headers (verify with any standardwebhooks library and the endpoint's secret)`
          : `endpoint ${id} is sent X-Service-Signature alone`,
      );
    });
}

function filterCommand(ep: Command): void {
  ep.command('filter')
    .description('set or clear the content filter: only events matching it are sent to the endpoint (docs/guide/filters.md)')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<endpoint_id>', 'endpoint id')
    .option('--set <json>', FILTER_HELP)
    .option('--clear', 'remove the filter: every event subscribed to is sent')
    .option('--json', 'machine output')
    .action(async (id: string, opts: { workspace: string; set?: string; clear?: boolean; json?: boolean }) => {
      if ((opts.set === undefined) === !opts.clear) throw new UsageError('give either --set JSON or --clear');
      const result = await inWorkspace(opts.workspace, (s) => setEndpointFilter(s, opts.workspace, id, opts.clear ? null : opts.set));
      print(!!opts.json, result, () =>
        result.filter
          ? `endpoint ${id} is sent only the events matching ${JSON.stringify(result.filter)}; from the next event raised`
          : `endpoint ${id} has no filter: it is sent every event it subscribes to`,
      );
    });
}

function testCommand(ep: Command): void {
  ep.command('test')
    .description('send a signed endpoint.test event to one endpoint (never counted toward auto-disable)')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<endpoint_id>', 'endpoint id')
    .option('--json', 'machine output')
    .action(async (id: string, opts: { workspace: string; json?: boolean }) => {
      const sent = await inWorkspace(opts.workspace, (s) => sendTestEvent(s, opts.workspace, id));
      print(!!opts.json, sent, () =>
        sent.endpoint_status === 'unverified'
          ? `test event ${sent.event_id} queued for ${id}; it is delivered once the endpoint answers its verification.`
          : `test event ${sent.event_id} queued for ${id}; see it with: wsops deliveries --workspace ${opts.workspace} --endpoint ${id}`,
      );
    });
}

/** `renewals check`, loaded with the endpoint commands (main.ts). */
function renewalsCommands(program: Command): void {
  const renewals = program.command('renewals').description('vendor renewal warnings');
  renewals
    .command('check')
    .description('run the renewal check now (it also runs at start and every 15 minutes)')
    .option('--workspace <id>', 'only this workspace')
    .option('--json', 'machine output')
    .action(async (opts: { workspace?: string; json?: boolean }) => {
      const result = await withServices(async (s) => {
        if (opts.workspace) await getWorkspace(s.database.db, opts.workspace);
        return checkRenewals(s, opts.workspace);
      });
      print(
        !!opts.json,
        result,
        () => `checked ${result.checked} vendors; ${result.events.length} vendor.renewal_approaching events emitted`,
      );
    });
}
