/**
 * `new WsopsClient({ apiKey, baseUrl })`: one typed resource per register (camelCase
 * properties, generated from the OpenAPI document), `events` (the events API) and `scopes()`.
 *
 * The key lives in a private field of the transport: it is never part of an error message,
 * `JSON.stringify(client)` or `util.inspect(client)` (which shows only the public key id).
 */

import { EventsResource } from './events.js';
import type { components } from './generated/openapi.js';
import { REGISTERS, type RegisterPath, type RegisterProperty, type RegisterTypes } from './generated/registers.js';
import { RegisterResource } from './resource.js';
import { type FetchLike, type RequestOptions, Transport } from './transport.js';

export interface ClientOptions {
  /** `svc_sk_<env>_<key_id>_<secret>`. Hold it only on a server. */
  apiKey: string;
  /** Where the API is served, e.g. `https://wsops.example.com` (no trailing `/api/v1`). */
  baseUrl: string;
  /** Per attempt, in ms. Default 30 000. */
  timeoutMs?: number;
  /** Retries after the first attempt on 429, 5xx and network errors. Default 2. */
  maxRetries?: number;
  /** Longest wait before one retry, in ms (also the most of a `Retry-After` honoured). Default 20 000. */
  maxRetryDelayMs?: number;
  /** A fetch implementation (default: the global `fetch` of Node 20). */
  fetch?: FetchLike;
}

export type Scopes = components['schemas']['Scopes'];

export type Resources = {
  readonly [K in RegisterProperty]: RegisterResource<RegisterTypes[K]['record'], RegisterTypes[K]['params']>;
};

const KEY_FORMAT = /^svc_sk_(live|test)_([A-Za-z0-9]+)_([A-Za-z0-9]+)$/;

// The resources are added per register in the constructor (one per REGISTERS entry), hence the merge.
export interface WsopsClient extends Resources {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: every Resources member is defined in the constructor
export class WsopsClient {
  readonly #transport: Transport;
  readonly #keyId: string | undefined;
  readonly baseUrl: string;
  /** The events API: `list({ since, types })` across pages, oldest first, and `get(id)`. */
  readonly events: EventsResource;

  constructor(options: ClientOptions) {
    if (!options || typeof options.apiKey !== 'string' || options.apiKey === '') {
      throw new TypeError('WsopsClient needs apiKey: the svc_sk_... key from the console (hold it only on a server)');
    }
    if (typeof options.baseUrl !== 'string' || !/^https?:\/\/[^/]/.test(options.baseUrl)) {
      throw new TypeError('WsopsClient needs baseUrl: the http(s) address the API is served at, e.g. https://wsops.example.com');
    }
    const timeoutMs = options.timeoutMs ?? 30_000;
    const maxRetries = options.maxRetries ?? 2;
    const maxRetryDelayMs = options.maxRetryDelayMs ?? 20_000;
    if (!(timeoutMs > 0)) throw new TypeError(`timeoutMs must be a positive number of milliseconds (got ${timeoutMs})`);
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError(`maxRetries must be a whole number ≥ 0 (got ${maxRetries})`);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#keyId = KEY_FORMAT.exec(options.apiKey)?.[2];
    this.#transport = new Transport({
      apiKey: options.apiKey,
      baseUrl: this.baseUrl,
      timeoutMs,
      maxRetries,
      maxRetryDelayMs,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    });
    this.events = new EventsResource(this.#transport);
    for (const register of REGISTERS) {
      Object.defineProperty(this, register.property, {
        value: new RegisterResource(this.#transport, register.path),
        enumerable: false,
      });
    }
  }

  /** The public id of the key (never the secret), when the key has the documented format. */
  get keyId(): string | undefined {
    return this.#keyId;
  }

  /** The resource of a register by its path name (`purchase-requests`), for code that iterates registers. */
  register(path: RegisterPath): RegisterResource<Record<string, unknown>, Record<string, unknown>> {
    const found = REGISTERS.find((r) => r.path === path);
    if (!found) throw new TypeError(`unknown register "${path}"; registers are: ${REGISTERS.map((r) => r.path).join(', ')}`);
    return this[found.property] as unknown as RegisterResource<Record<string, unknown>, Record<string, unknown>>;
  }

  /** The key's id, environment, workspace, scopes and expiry. */
  scopes(options: RequestOptions = {}): Promise<Scopes> {
    return this.#transport.get<Scopes>('/api/v1/scopes', {}, options);
  }

  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, keyId: this.#keyId };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `WsopsClient { baseUrl: ${JSON.stringify(this.baseUrl)}, keyId: ${JSON.stringify(this.#keyId ?? null)} }`;
  }
}
