/**
 * Ready receivers that keep the raw body (a signature is over the bytes as sent, never over
 * re-serialised JSON), verify, skip duplicate event ids, and answer:
 *   200 once `onEvent` resolved (or the event id was already handled),
 *   400 `{"error": reason}` when the delivery is not authentic (the service retries; it will not pass later),
 *   413 for a body over `maxBodyBytes`, 500 when `onEvent` threw (the service retries).
 * No framework is a dependency: the shapes used are typed here.
 */
import type { IdempotencyGuard } from './idempotency.js';
import { SIGNATURE_HEADER, type VerifyOptions, verifyWebhook, type WebhookEvent, WebhookSignatureError } from './verify.js';

export interface WebhookHandlerOptions<E = WebhookEvent> extends VerifyOptions {
  /** The endpoint's signing secret, or several during a rotation. */
  secret: string | readonly string[];
  /** Called once per authentic event (per event id, with `idempotency`). */
  onEvent(event: E): unknown;
  /** Skips events whose id was already handled. */
  idempotency?: IdempotencyGuard;
  /** Largest body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Told about every refused delivery (for a log line). The key is never in it: there is none here. */
  onError?(error: Error): void;
}

export interface WebhookResult {
  status: number;
  body: Record<string, unknown>;
}

class BodyTooLarge extends Error {}

async function readRaw(stream: AsyncIterable<Uint8Array | string>, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk);
    size += buf.length;
    if (size > max) throw new BodyTooLarge(`the body is larger than ${max} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** The framework-free core: raw body and header in, status and body out. */
export async function handleWebhook<E extends { id: string } = WebhookEvent>(
  rawBody: Uint8Array | string,
  signatureHeader: string | undefined,
  options: WebhookHandlerOptions<E>,
): Promise<WebhookResult> {
  let event: E;
  try {
    event = verifyWebhook<E>(rawBody, signatureHeader, options.secret, options);
  } catch (err) {
    if (err instanceof WebhookSignatureError) {
      options.onError?.(err);
      return { status: 400, body: { error: err.reason } };
    }
    throw err;
  }
  try {
    if (options.idempotency) {
      const ran = await options.idempotency.once(event.id, () => options.onEvent(event));
      return { status: 200, body: { received: true, duplicate: !ran } };
    }
    await options.onEvent(event);
    return { status: 200, body: { received: true } };
  } catch (err) {
    options.onError?.(err instanceof Error ? err : new Error(String(err)));
    return { status: 500, body: { error: 'handler_failed' } };
  }
}

/** The part of a Node/Express response used here. */
export interface MinimalResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

/** The part of a Node/Express request used here. */
export interface MinimalRequest extends AsyncIterable<Uint8Array | string> {
  headers: Record<string, string | string[] | undefined>;
  /** Express: set by `express.raw()` (a Buffer) or, wrongly for webhooks, by `express.json()` (an object). */
  body?: unknown;
}

function send(res: MinimalResponse, result: WebhookResult): void {
  res.statusCode = result.status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(result.body));
}

async function respond<E extends { id: string }>(req: MinimalRequest, res: MinimalResponse, options: WebhookHandlerOptions<E>) {
  const max = options.maxBodyBytes ?? 1024 * 1024;
  let raw: Uint8Array | string;
  if (req.body instanceof Uint8Array || typeof req.body === 'string') {
    raw = req.body;
  } else if (req.body !== undefined && req.body !== null && typeof req.body === 'object' && Object.keys(req.body).length > 0) {
    // A JSON body parser ran first: the original bytes are gone and cannot be verified.
    const error = new Error(
      'the request body was already parsed as JSON; mount the webhook route before express.json(), or use express.raw()',
    );
    options.onError?.(error);
    return send(res, { status: 500, body: { error: 'body_already_parsed' } });
  } else {
    try {
      raw = await readRaw(req, max);
    } catch (err) {
      if (err instanceof BodyTooLarge) return send(res, { status: 413, body: { error: 'body_too_large' } });
      throw err;
    }
  }
  send(res, await handleWebhook(raw, headerValue(req.headers, SIGNATURE_HEADER), options));
}

/**
 * `http.createServer(nodeWebhookHandler({ secret, onEvent }))`, or call it from your own request
 * listener. Typed by the parts of `IncomingMessage` and `ServerResponse` it uses, so the
 * declarations need no @types/node.
 */
export function nodeWebhookHandler<E extends { id: string } = WebhookEvent>(options: WebhookHandlerOptions<E>) {
  return (req: MinimalRequest, res: MinimalResponse): Promise<void> => respond(req, res, options);
}

/**
 * `app.post('/webhooks', expressWebhookHandler({ secret, onEvent }))`. Register it before any
 * `express.json()` (or give it `express.raw({ type: 'application/json' })`): it needs the bytes.
 */
export function expressWebhookHandler<E extends { id: string } = WebhookEvent>(options: WebhookHandlerOptions<E>) {
  return (req: MinimalRequest, res: MinimalResponse, next?: (err?: unknown) => void): void => {
    respond(req, res, options).catch((err) => (next ? next(err) : send(res, { status: 500, body: { error: 'handler_failed' } })));
  };
}

/** The part of a Fastify instance used here. */
export interface MinimalFastify {
  addContentTypeParser(
    type: string,
    options: { parseAs: 'buffer'; bodyLimit?: number },
    parser: (req: unknown, body: Uint8Array, done: (err: Error | null, body?: unknown) => void) => void,
  ): unknown;
  post(
    path: string,
    handler: (
      request: { body: unknown; headers: Record<string, string | string[] | undefined> },
      reply: { code(status: number): { send(body: unknown): unknown } },
    ) => Promise<unknown>,
  ): unknown;
}

/**
 * `app.register(fastifyWebhookPlugin({ path: '/webhooks', secret, onEvent }))`. The plugin is
 * encapsulated: its raw-body JSON parser applies to its own route only.
 */
export function fastifyWebhookPlugin<E extends { id: string } = WebhookEvent>(options: WebhookHandlerOptions<E> & { path?: string }) {
  return async (instance: MinimalFastify): Promise<void> => {
    const bodyLimit = options.maxBodyBytes ?? 1024 * 1024;
    instance.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (_req, body, done) => done(null, body));
    instance.post(options.path ?? '/webhooks', async (request, reply) => {
      const raw = request.body instanceof Uint8Array ? request.body : new Uint8Array(0);
      const result = await handleWebhook(raw, headerValue(request.headers, SIGNATURE_HEADER), options);
      return reply.code(result.status).send(result.body);
    });
  };
}
