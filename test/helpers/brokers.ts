/**
 * The real brokers of the event-destination suites (.ci/run starts them): RabbitMQ on
 * 127.0.0.1:5672 (user guest) and NATS with JetStream on 127.0.0.1:4222; a NATS server of a
 * test's own when it must stop and start one; consumers that read what wsops published.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jetstreamManager, type StoredMsg } from '@nats-io/jetstream';
import { type NatsConnection, connect as natsConnect } from '@nats-io/transport-node';
import { connect as amqpConnect, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { freePort, until } from './processes.js';

export const RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:5672/%2F';
export const NATS_URL = 'nats://127.0.0.1:4222';
const run = promisify(execFile);

/** rabbitmqctl, for what only the broker's operator can do: users, and stopping the broker. */
export async function rabbitmqctl(...args: string[]): Promise<string> {
  return (await run('rabbitmqctl', args, { timeout: 60_000 })).stdout;
}

/** Stops RabbitMQ's application and starts it again (its durable exchanges and queues stay). */
export async function restartRabbitMq(during: () => Promise<void>): Promise<void> {
  await rabbitmqctl('stop_app');
  try {
    await during();
  } finally {
    await rabbitmqctl('start_app');
    await rabbitmqctl('await_startup');
  }
}

/** A durable topic exchange and a durable queue bound to it for every routing key, consumed into `messages`. */
export class RabbitConsumer {
  readonly messages: ConsumeMessage[] = [];
  private model: ChannelModel | undefined;

  constructor(
    readonly exchange: string,
    private readonly queue = `${exchange}.q`,
  ) {}

  async start(): Promise<this> {
    this.model = await amqpConnect(RABBITMQ_URL);
    this.model.on('error', () => {});
    const ch = await this.model.createChannel();
    ch.on('error', () => {});
    await ch.assertExchange(this.exchange, 'topic', { durable: true });
    await ch.assertQueue(this.queue, { durable: true });
    await ch.bindQueue(this.queue, this.exchange, '#');
    await ch.consume(this.queue, (m) => {
      if (m) {
        this.messages.push(m);
        ch.ack(m);
      }
    });
    return this;
  }

  /** After a broker restart: the old connection is gone; the durable queue kept what arrived meanwhile. */
  async reconnect(): Promise<this> {
    await this.model?.close().catch(() => {});
    return this.start();
  }

  /** Waits (real time, the broker's) until `n` messages have arrived. */
  async received(n: number, what = `${n} message(s) in ${this.queue}`): Promise<ConsumeMessage[]> {
    await until(() => this.messages.length >= n, 10_000, what, 20);
    return this.messages;
  }

  /** Removes the queue and exchange, on a connection of its own (a broker restart closed the consumer's). */
  async stop(): Promise<void> {
    await this.model?.close().catch(() => {});
    this.model = undefined;
    const model = await amqpConnect(RABBITMQ_URL);
    model.on('error', () => {});
    try {
      const ch = await model.createChannel();
      await ch.deleteQueue(this.queue);
      await ch.deleteExchange(this.exchange);
    } finally {
      await model.close().catch(() => {});
    }
  }
}

/** An exchange with no queue bound: every message published to it is unroutable. Returns a remover. */
export async function bareExchange(name: string): Promise<() => Promise<void>> {
  const model = await amqpConnect(RABBITMQ_URL);
  model.on('error', () => {});
  const ch = await model.createChannel();
  await ch.assertExchange(name, 'topic', { durable: false });
  return async () => {
    await ch.deleteExchange(name).catch(() => {});
    await model.close().catch(() => {});
  };
}

/** A JetStream stream over `subjects`, read back message by message. */
export class NatsStream {
  private nc: NatsConnection | undefined;

  constructor(
    readonly name: string,
    readonly subjects: string[],
    private readonly server = NATS_URL,
  ) {}

  async start(): Promise<this> {
    await this.attach();
    const jsm = await jetstreamManager(this.nc as NatsConnection);
    await jsm.streams.add({ name: this.name, subjects: this.subjects });
    return this;
  }

  /** Connects to a stream that exists (after the server was started again). */
  async attach(): Promise<this> {
    this.nc = await natsConnect({ servers: this.server.replace('nats://', ''), reconnect: false });
    return this;
  }

  /** Every message in the stream, in order. */
  async messages(): Promise<StoredMsg[]> {
    if (!this.nc) throw new Error('stream not started');
    const jsm = await jetstreamManager(this.nc);
    const info = await jsm.streams.info(this.name);
    const out: StoredMsg[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
      const m = await jsm.streams.getMessage(this.name, { seq }).catch(() => null);
      if (m) out.push(m);
    }
    return out;
  }

  async stop(remove = true): Promise<void> {
    if (!this.nc) return;
    try {
      if (remove) await (await jetstreamManager(this.nc)).streams.delete(this.name);
      await this.nc.close();
    } catch {
      // The server is gone already (a test's own, removed with its store).
    }
    this.nc = undefined;
  }
}

/** A nats-server of the test's own (JetStream, store in a temporary folder), to stop and start again. */
export class OwnNatsServer {
  private child: ChildProcess | undefined;
  readonly store = mkdtempSync(join(tmpdir(), 'wsops-nats-'));
  port = 0;

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** With `tls`, the server requires TLS with this certificate and key (PEM files). */
  constructor(private readonly tls?: { cert: string; key: string }) {}

  async start(): Promise<this> {
    if (this.port === 0) this.port = await freePort();
    const tlsArgs = this.tls ? ['--tls', '--tlscert', this.tls.cert, '--tlskey', this.tls.key] : [];
    this.child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.store, ...tlsArgs], {
      stdio: 'ignore',
    });
    if (this.tls) {
      // The client below speaks plain NATS; a TLS server's port accepting connections is enough.
      await until(
        () =>
          new Promise<boolean>((r) => {
            const s = createConnection(this.port, '127.0.0.1', () => {
              s.destroy();
              r(true);
            });
            s.on('error', () => r(false));
          }),
        10_000,
        'nats-server (TLS) to listen',
        50,
      );
      return this;
    }
    await until(
      async () => {
        try {
          const nc = await natsConnect({ servers: `127.0.0.1:${this.port}`, reconnect: false, timeout: 500 });
          await nc.close();
          return true;
        } catch {
          return false;
        }
      },
      10_000,
      'nats-server to accept connections',
      50,
    );
    return this;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    this.child = undefined;
  }

  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.store, { recursive: true, force: true });
  }
}

/** A self-signed certificate for `localhost` (PEM files in a temporary folder), which no client trusts. */
export function selfSignedCertificate(): { cert: string; key: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'wsops-nats-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=localhost'],
    {
      stdio: 'ignore',
    },
  );
  return { cert, key, dir };
}
