/**
 * RabbitMQ (AMQP 0-9-1) destinations: each delivery is one persistent message published to the
 * endpoint's exchange on a confirm channel, `mandatory` set; it succeeds when the broker
 * confirms it (basic.ack) and was routed to a queue. A message the broker returns (no queue
 * bound for its routing key), a nack, or a channel the broker closed (the exchange does not
 * exist, or the user may not write to it) fails the attempt as `broker_refused`; refused
 * credentials as `auth`. amqplib loads at the first RabbitMQ delivery.
 *
 * The connection goes to the checked address (a pinned lookup) with TLS verified against the
 * host name (servername), and is reused per endpoint (pool.ts).
 */
import type { Message as AmqpMessage, ChannelModel, ConfirmChannel } from 'amqplib';
import { brokerAddress } from './address.js';
import { type Closable, ConnectionPool } from './pool.js';
import { ATTEMPT_TIMEOUT_MS, type AttemptOutcome, classifyError } from './send.js';
import { renderTemplate } from './templates.js';
import { beforeDeadline, failed, type Message, SUCCEEDED, type Target, type Transport } from './transport.js';
import { pinnedLookup } from './url-safety.js';

/** A broker refusal, with the class it is recorded under. */
class BrokerError extends Error {
  constructor(
    readonly errorClass: 'broker_refused' | 'auth',
    message: string,
  ) {
    super(message);
  }
}

/** One connection and its confirm channel; the channel is opened again after the broker closes it. */
class RabbitLink implements Closable {
  private channel: Promise<ConfirmChannel> | undefined;
  private broken = false;
  /** Why the broker closed the current channel (e.g. NOT_FOUND - no exchange), until a new one opens. */
  private channelError: Error | undefined;
  /** Messages the broker returned as unroutable, by delivery id, until their confirm arrives. */
  private readonly returned = new Set<string>();

  constructor(private readonly model: ChannelModel) {
    // Without listeners an 'error' would be thrown at the process; a broken link is dropped instead.
    model.on('error', () => {});
    model.on('close', () => {
      this.broken = true;
    });
  }

  get closed(): boolean {
    return this.broken;
  }

  private open(): Promise<ConfirmChannel> {
    this.channel ??= this.model.createConfirmChannel().then((ch) => {
      this.channelError = undefined;
      ch.on('error', (err: Error) => {
        this.channelError = err;
      });
      ch.on('close', () => {
        this.channel = undefined;
        const reason = this.channelError;
        setImmediate(() => {
          for (const reject of this.waiting) reject(refusal(reason));
          this.waiting.clear();
        });
      });
      ch.on('return', (msg: AmqpMessage) => {
        const id = msg.properties.headers?.['x-service-delivery'];
        if (typeof id === 'string') this.returned.add(id);
      });
      return ch;
    });
    const opening = this.channel;
    opening.catch(() => {
      if (this.channel === opening) this.channel = undefined;
    });
    return opening;
  }

  /** Publishes that wait for their confirm: rejected at once if the channel closes under them. */
  private readonly waiting = new Set<(err: Error) => void>();

  async publish(exchange: string, routingKey: string, message: Message, headers: Record<string, string>): Promise<void> {
    const ch = await this.open();
    await new Promise<void>((resolve, reject) => {
      const settle = (err: Error | null) => {
        this.waiting.delete(fail);
        if (err) return reject(err);
        if (this.returned.delete(message.deliveryId)) {
          return reject(
            new BrokerError('broker_refused', `unroutable: no queue is bound to exchange "${exchange}" for routing key "${routingKey}"`),
          );
        }
        resolve();
      };
      const fail = (err: Error) => settle(err);
      this.waiting.add(fail);
      try {
        ch.publish(
          exchange,
          routingKey,
          Buffer.from(message.body),
          {
            persistent: true,
            mandatory: true,
            contentType: 'application/json',
            messageId: message.eventId,
            type: message.eventType,
            timestamp: Math.floor(Date.now() / 1000),
            headers,
          },
          // A channel the broker closes (no such exchange) fails its unconfirmed publishes too: the
          // reason it gave (its 'error' event) is told a moment later, so wait for it before naming one.
          (err: unknown) => {
            if (!err) return settle(null);
            setImmediate(() =>
              settle(
                this.channelError
                  ? refusal(this.channelError)
                  : new BrokerError('broker_refused', 'the broker did not accept the message (nack)'),
              ),
            );
          },
        );
      } catch (err) {
        settle(refusal(err));
      }
    });
  }

  async close(): Promise<void> {
    this.broken = true;
    await this.model.close().catch(() => {});
  }
}

/** A channel or connection closed by the broker, in its own words (e.g. `NOT_FOUND - no exchange 'x' in vhost '/'`). */
function refusal(err: unknown): Error {
  const message = err instanceof Error ? err.message : 'the broker closed the channel';
  if (/ACCESS[-_]REFUSED|403/.test(message)) return new BrokerError('auth', message);
  if (/NOT[-_]FOUND|404|PRECONDITION|406|channel closed|Channel closed/i.test(message)) return new BrokerError('broker_refused', message);
  return err instanceof Error ? err : new Error(message);
}

export class RabbitMqTransport implements Transport {
  private readonly pool: ConnectionPool<RabbitLink>;

  constructor(options: { idleMs?: number | undefined }) {
    this.pool = new ConnectionPool<RabbitLink>(options.idleMs);
  }

  async send(target: Target, message: Message, deadline: AbortSignal): Promise<AttemptOutcome> {
    const started = performance.now();
    const done = (o: Omit<AttemptOutcome, 'latencyMs'>): AttemptOutcome => ({ ...o, latencyMs: Math.round(performance.now() - started) });
    const exchange = target.exchange ?? '';
    const values = { type: message.eventType, workspace: target.workspaceId, endpoint: target.endpointId };
    const routingKey = renderTemplate(target.routingKey ?? '{type}', values);
    const headers = { ...message.headers, 'x-service-event-id': message.eventId };
    try {
      await beforeDeadline(
        deadline,
        this.pool.with(
          target.endpointId,
          target.addresses,
          target.url.href,
          () => this.connect(target),
          (link) => link.publish(exchange, routingKey, message, headers),
        ),
      );
      return done(SUCCEEDED);
    } catch (err) {
      if (err instanceof BrokerError) return done(failed(err.errorClass, err.message));
      const refused = refusal(err);
      if (refused instanceof BrokerError) return done(failed(refused.errorClass, refused.message));
      const { errorClass, message: text } = classifyError(err);
      return done(failed(errorClass, text));
    }
  }

  private async connect(target: Target): Promise<RabbitLink> {
    const { connect } = await import('amqplib');
    const a = brokerAddress(target.url.href);
    try {
      const model = await connect(
        {
          protocol: a.tls ? 'amqps' : 'amqp',
          hostname: a.host,
          port: a.port,
          username: a.user,
          password: target.password ?? '',
          vhost: a.vhost,
          heartbeat: 30,
        },
        // The checked address, never a second lookup; TLS verifies the certificate for the host name.
        { lookup: pinnedLookup(target.addresses), timeout: ATTEMPT_TIMEOUT_MS, rejectUnauthorized: true, noDelay: true },
      );
      return new RabbitLink(model);
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      // amqplib: "Handshake terminated by server: 403 (ACCESS-REFUSED) ..."; a wrong vhost is 530 NOT_ALLOWED.
      if (/ACCESS[-_]REFUSED|403/.test(text)) throw new BrokerError('auth', `the broker refused the credentials: ${text}`);
      if (/NOT[-_]ALLOWED|530/.test(text)) throw new BrokerError('auth', `the broker refused access to vhost "${a.vhost}": ${text}`);
      throw err;
    }
  }

  forget(endpointId: string): Promise<void> {
    return this.pool.forget(endpointId);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
