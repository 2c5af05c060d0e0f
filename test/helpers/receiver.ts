import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildOpenApi } from '../../src/developers/openapi.js';
import { OpenApiValidator } from './openapi-validator.js';

/** Every delivery a test receives is checked against the `webhooks` section of the served document. */
let validator: OpenApiValidator | undefined;
function webhookProblems(headers: IncomingMessage['headers'], body: string): string[] {
  validator ??= new OpenApiValidator(buildOpenApi('http://localhost:8080') as ConstructorParameters<typeof OpenApiValidator>[0]);
  return validator.checkWebhook(headers, body);
}

export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Behaviour = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export const answer =
  (status: number, body = 'ok'): Behaviour =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
  };

/** A real webhook receiver on 127.0.0.1; its behaviour can be changed per path at any time. */
export class Receiver {
  readonly received: Received[] = [];
  /** Deliveries that did not match the OpenAPI document; `stop()` fails when there are any. */
  readonly invalid: string[] = [];

  /** `checkWebhooks: false` for a receiver that serves plain posts, not deliveries (agent tests). */
  constructor(private readonly options: { checkWebhooks?: boolean } = {}) {}
  private server: Server | undefined;
  private readonly behaviours = new Map<string, Behaviour>();
  fallback: Behaviour = answer(200);

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const path = req.url ?? '/';
        this.received.push({ path, headers: req.headers, body });
        if (req.method === 'POST' && this.options.checkWebhooks !== false)
          this.invalid.push(...webhookProblems(req.headers, body).map((p) => `${path}: ${p}`));
        (this.behaviours.get(path) ?? this.fallback)(req, res, body);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    const address = this.server?.address() as AddressInfo | undefined;
    if (!address) throw new Error('receiver not started');
    return address.port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  on(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
    if (this.invalid.length)
      throw new Error(`deliveries that do not match the OpenAPI webhooks section:\n${this.invalid.slice(0, 10).join('\n')}`);
  }
}
