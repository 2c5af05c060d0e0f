/**
 * The destination kinds and their transports: the dispatcher asks for the transport of an
 * endpoint's kind (its URL's scheme, address.ts) and sends through it. A new kind is one new file
 * here (its Transport) and one entry below; its URL form goes in address.ts.
 */
import type { DestinationKind } from './address.js';
import { HttpsTransport } from './https.js';
import { NatsTransport } from './nats.js';
import { RabbitMqTransport } from './rabbitmq.js';
import type { Transport } from './transport.js';

export { type DestinationKind, kindOf } from './address.js';

export class Transports {
  private readonly byKind: Readonly<Record<DestinationKind, Transport>>;

  constructor(options: { idleMs?: number | undefined } = {}) {
    this.byKind = {
      https: new HttpsTransport(options),
      rabbitmq: new RabbitMqTransport(options),
      nats: new NatsTransport(options),
    };
  }

  of(kind: DestinationKind): Transport {
    return this.byKind[kind];
  }

  /** Closes the connections of an endpoint that was disabled. */
  async forget(endpointId: string): Promise<void> {
    await Promise.all(Object.values(this.byKind).map((t) => t.forget(endpointId)));
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.byKind).map((t) => t.close()));
  }
}
