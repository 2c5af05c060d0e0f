/**
 * NATS JetStream destinations: each delivery is one JetStream publish to the endpoint's subject
 * with `Nats-Msg-Id` set to the message's dedupe id (the event id; a resend's own, ADR 52); it
 * succeeds on the stream's PubAck. No stream listening on the subject (no responders) or a
 * stream error fails the attempt as `broker_refused`; refused credentials as `auth`. The
 * client loads at the first NATS delivery.
 *
 * The connection goes to the checked address (the server list is that address, host name
 * resolution off, cluster updates ignored so the server cannot point us elsewhere); for
 * `tls://` the certificate is verified for the host name. One connection per endpoint (pool.ts),
 * never reconnecting by itself: a broken one is dropped and the next attempt checks and
 * connects again.
 */
import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection, NodeConnectionOptions } from '@nats-io/transport-node';
import { brokerAddress } from './address.js';
import { type Closable, ConnectionPool } from './pool.js';
import { ATTEMPT_TIMEOUT_MS, type AttemptOutcome, classifyError } from './send.js';
import { renderTemplate } from './templates.js';
import { beforeDeadline, failed, type Message, SUCCEEDED, type Target, type Transport } from './transport.js';

/** The client's two modules, loaded at the first NATS delivery. */
const client = async () => ({ ...(await import('@nats-io/transport-node')), ...(await import('@nats-io/jetstream')) });
type Client = Awaited<ReturnType<typeof client>>;
let loaded: Promise<Client> | undefined;
const loadClient = () => {
  loaded ??= client();
  return loaded;
};

class NatsLink implements Closable {
  readonly js: JetStreamClient;

  constructor(
    readonly nc: NatsConnection,
    readonly lib: Client,
  ) {
    this.js = lib.jetstream(nc, { timeout: ATTEMPT_TIMEOUT_MS });
  }

  get closed(): boolean {
    return this.nc.isClosed();
  }

  async close(): Promise<void> {
    await this.nc.close().catch(() => {});
  }
}

export class NatsTransport implements Transport {
  private readonly pool: ConnectionPool<NatsLink>;

  constructor(options: { idleMs?: number | undefined }) {
    this.pool = new ConnectionPool<NatsLink>(options.idleMs);
  }

  async send(target: Target, message: Message, deadline: AbortSignal): Promise<AttemptOutcome> {
    const started = performance.now();
    const done = (o: Omit<AttemptOutcome, 'latencyMs'>): AttemptOutcome => ({ ...o, latencyMs: Math.round(performance.now() - started) });
    const subject = renderTemplate(target.subject ?? 'wsops.{workspace}.{type}', {
      type: message.eventType,
      workspace: target.workspaceId,
      endpoint: target.endpointId,
    });
    try {
      await beforeDeadline(
        deadline,
        this.pool.with(
          target.endpointId,
          target.addresses,
          target.url.href,
          () => this.connect(target),
          async (link) => {
            const h = link.lib.headers();
            for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
            h.set('x-service-event-id', message.eventId);
            await link.js.publish(subject, message.body, {
              msgID: message.dedupeId,
              headers: h,
              timeout: ATTEMPT_TIMEOUT_MS,
              // A missing stream is an answer (the attempt fails), not something to wait out.
              retries: 0,
            });
          },
        ),
      );
      return done(SUCCEEDED);
    } catch (err) {
      return done(classify(err, subject));
    }
  }

  private async connect(target: Target): Promise<NatsLink> {
    const lib = await loadClient();
    const a = brokerAddress(target.url.href);
    const address = target.addresses[0] ?? a.host;
    const server = address.includes(':') ? `[${address}]:${a.port}` : `${address}:${a.port}`;
    // servername is passed through to tls.connect (the client's typings omit it).
    const tls = { servername: a.host, rejectUnauthorized: true } as NodeConnectionOptions['tls'];
    const nc = await lib.connect({
      servers: [server],
      name: 'wsops',
      timeout: ATTEMPT_TIMEOUT_MS,
      reconnect: false,
      resolve: false,
      ignoreClusterUpdates: true,
      // tls://: TLS is required and the certificate is checked for the host name, not the address.
      tls: a.tls ? tls : null,
    });
    return new NatsLink(nc, lib);
  }

  forget(endpointId: string): Promise<void> {
    return this.pool.forget(endpointId);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function classify(err: unknown, subject: string): Omit<AttemptOutcome, 'latencyMs'> {
  const e = err as { name?: string; message?: string; code?: string | number };
  const text = `${e.name ?? ''} ${e.message ?? String(err)}`;
  // The client reads "no responders" to a JetStream publish as JetStream not enabled; either way no stream took it.
  if (/no responders|NoResponders|503|jetstream is not enabled/i.test(text))
    return failed(
      'broker_refused',
      `no JetStream stream listens on subject "${subject}" (no responders; or JetStream is not enabled on the server)`,
    );
  if (/Authorization|authentication|permissions? violation/i.test(text)) return failed('auth', e.message ?? text);
  if (/JetStream|stream/i.test(e.name ?? '')) return failed('broker_refused', e.message ?? text);
  // Refused, or a connection the server closed under the publish (it stopped): the broker is not there.
  if (/connection (refused|closed)|closed connection|ClosedConnection|disconnect|ConnectionError/i.test(text))
    return failed('connection', e.message ?? text);
  const { errorClass, message } = classifyError(err);
  return failed(errorClass, message);
}
