/**
 * `wsops listen`: a webhook receiver on 127.0.0.1 for testing on one machine. It checks each
 * delivery's signature (with the secret given, or the endpoint's secrets read from the database
 * at each delivery, so it can run before the endpoint exists), prints the event, and answers 200
 * when the signature holds and 400 when it does not, as a receiver should.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { Command } from 'commander';
import { parsePositiveInt, UsageError } from '../cli-kit/output.js';
import { printable } from '../text-rules.js';
import { type EndpointsServices, signingSecrets } from '../webhooks/endpoints/endpoints.js';
import { signatureProblem } from '../webhooks/signing/signature.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { withServices } from './context.js';

export const DEFAULT_LISTEN_PORT = 9911;
/** Deliveries are small JSON documents; a larger body is not one. */
const MAX_BODY_BYTES = 1024 * 1024;

interface ListenOptions {
  port: string;
  secret?: string;
  workspace?: string;
  endpoint?: string;
  json?: boolean;
}

type SecretSource = () => Promise<string[]>;

export function listenCommand(program: Command): void {
  program
    .command('listen')
    .description(
      'receive webhooks on 127.0.0.1 for local testing: checks each signature, prints the event, answers 200 (or 400 when the signature does not hold)',
    )
    .option('--port <n>', 'TCP port on 127.0.0.1', String(DEFAULT_LISTEN_PORT))
    .option('--secret <whsec>', 'the signing secret `endpoint create` printed')
    .option('--workspace <id>', 'instead of --secret: read the signing secrets of this workspace’s endpoints from the database')
    .option('--endpoint <id>', 'with --workspace: only this endpoint’s secrets')
    .option('--json', 'print each delivery as one JSON line')
    .addHelpText(
      'after',
      `
The server must be allowed to deliver to 127.0.0.1: start it, and run the CLI that registers the
endpoint, with WSOPS_ALLOW_PRIVATE_WEBHOOKS=true (test and development only). Then:
  wsops listen --workspace W &
  wsops endpoint create --workspace W --url http://127.0.0.1:${DEFAULT_LISTEN_PORT}/hooks --scopes assets:read --events asset.assigned`,
    )
    .action(async (opts: ListenOptions) => {
      const port = parsePositiveInt('--port', opts.port, 65535);
      if (opts.secret !== undefined && opts.workspace !== undefined) {
        throw new UsageError('give --secret or --workspace, not both');
      }
      if (opts.endpoint !== undefined && opts.workspace === undefined) {
        throw new UsageError('--endpoint needs --workspace (the endpoint’s secrets are read from that workspace)');
      }
      if (opts.secret !== undefined) {
        if (!opts.secret.startsWith('whsec_'))
          throw new UsageError('--secret must be a signing secret (whsec_…) as endpoint create printed it');
        const secret = opts.secret;
        await listen(port, async () => [secret], opts);
        return;
      }
      if (opts.workspace === undefined) {
        throw new UsageError('give --secret whsec_… (printed by endpoint create) or --workspace W [--endpoint E] to check signatures');
      }
      const workspace = opts.workspace;
      await withServices(async (s) => {
        await getWorkspace(s.database.db, workspace);
        await listen(port, () => storedSecrets(s, workspace, opts.endpoint), opts);
      });
    });
}

/** The secrets that sign now, of the one endpoint or of every endpoint of the workspace that is not disabled. */
async function storedSecrets(s: EndpointsServices, workspaceId: string, endpointId: string | undefined): Promise<string[]> {
  let q = s.database.db
    .selectFrom('webhook_endpoints')
    .select(['secret_ciphertext', 'previous_secret_ciphertext', 'previous_secret_expires_at'])
    .where('workspace_id', '=', workspaceId);
  q = endpointId === undefined ? q.where('status', '!=', 'disabled') : q.where('id', '=', endpointId);
  const rows = await q.execute();
  const now = s.clock();
  return rows.flatMap((row) => signingSecrets(s, row, now));
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function listen(port: number, secrets: SecretSource, opts: ListenOptions): Promise<void> {
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const server = createServer(async (req, res) => {
    const answer = (status: number, text: string) => res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
    if (req.method !== 'POST') return answer(405, 'deliveries are POST requests\n');
    const body = await readBody(req).catch(() => undefined);
    const receivedAt = new Date().toISOString();
    const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);
    const delivery = header('x-service-delivery') ?? '-';
    if (body === undefined) {
      say(`${receivedAt} refused ${delivery}: body over ${MAX_BODY_BYTES} bytes`);
      return answer(413, 'body too large\n');
    }
    let problem: string | undefined;
    try {
      problem = signatureProblem(header('x-service-signature'), body, await secrets(), Math.floor(Date.now() / 1000));
    } catch (err) {
      problem = `signing secrets could not be read: ${err instanceof Error ? err.message : String(err)}`;
    }
    let event: { id?: unknown; type?: unknown; data?: unknown } | undefined;
    try {
      event = JSON.parse(body.toString('utf8'));
    } catch {
      problem ??= 'the body is not JSON';
    }
    if (opts.json) {
      say(JSON.stringify({ received_at: receivedAt, delivery_id: delivery, path: req.url, verified: !problem, problem, event }));
    } else if (problem) {
      say(printable(`${receivedAt} refused ${delivery} on ${req.url}: ${problem} (answered 400)`));
    } else {
      say(printable(`${receivedAt} ${String(event?.type)} ${String(event?.id)} (delivery ${delivery} on ${req.url}) signature ok`));
      say(printable(`  ${JSON.stringify(event?.data)}`));
    }
    answer(problem ? 400 : 200, problem ? `${problem}\n` : 'ok\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new UsageError(`port ${port} on 127.0.0.1 is in use; choose another with --port`) : err),
    );
    server.listen(port, '127.0.0.1', resolve);
  });
  const where = opts.workspace
    ? `signatures checked with the secrets of ${opts.endpoint ? `endpoint ${opts.endpoint}` : `the endpoints of ${opts.workspace}`}`
    : 'signatures checked with the secret given';
  process.stderr.write(
    `wsops: listening on http://127.0.0.1:${port}/ (any path; ${where}); the server needs WSOPS_ALLOW_PRIVATE_WEBHOOKS=true to deliver here. Ctrl-C stops.\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      server.closeAllConnections();
      server.close(() => resolve());
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
