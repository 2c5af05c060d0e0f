/**
 * One GET with the client's policy: bearer key, per-attempt timeout, caller's AbortSignal,
 * retries with jittered exponential backoff on 429, 5xx and network failures (honouring
 * `Retry-After`), then a typed error. Every API operation is a GET, so a retry is always safe.
 */
import { ConnectionError, errorFromResponse, type Problem, TimeoutError, type WsopsApiError } from './errors.js';
import type { AbortSignalLike, RequestInitLike, ResponseLike } from './fetch-types.js';

export type FetchLike = (input: string, init: RequestInitLike) => Promise<ResponseLike>;

export interface TransportOptions {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  maxRetries: number;
  /** Longest wait before one retry, in ms; a `Retry-After` longer than this is not waited for. */
  maxRetryDelayMs: number;
  fetch: FetchLike;
}

export interface RequestOptions {
  signal?: AbortSignalLike;
}

export type Query = Record<string, string | number | boolean | undefined | null>;

const BASE_DELAY_MS = 250;

/** Full-jitter-ish backoff: between half and all of 250 ms × 2^attempt, at most the cap. */
export function backoffMs(attempt: number, capMs: number): number {
  const ceiling = Math.min(capMs, BASE_DELAY_MS * 2 ** attempt);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** `Retry-After` as seconds (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

type Attempt =
  | { kind: 'ok'; body: unknown }
  | { kind: 'error'; error: WsopsApiError; retryable: boolean; retryAfter: number | undefined }
  | { kind: 'failure'; error: ConnectionError | TimeoutError };

export class Transport {
  constructor(private readonly options: TransportOptions) {}

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null) params.append(name, String(value));
    const qs = params.toString();
    return `${this.options.baseUrl}${path}${qs ? `?${qs}` : ''}`;
  }

  async get<T>(path: string, query: Query = {}, requestOptions: RequestOptions = {}): Promise<T> {
    const url = this.url(path, query);
    const { maxRetries, maxRetryDelayMs } = this.options;
    const signal = requestOptions.signal;
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const result = await this.attempt(url, path, signal);
      if (result.kind === 'ok') return result.body as T;
      const retryable = result.kind === 'failure' || result.retryable;
      if (!retryable || attempt >= maxRetries) throw result.error;
      let delay = backoffMs(attempt, maxRetryDelayMs);
      if (result.kind === 'error' && result.retryAfter !== undefined) {
        const asked = Math.ceil(result.retryAfter * 1000);
        if (asked > maxRetryDelayMs) throw result.error; // the server asks for longer than we are allowed to wait
        delay = Math.max(asked, Math.min(delay, asked + BASE_DELAY_MS)); // never before Retry-After, a little jitter after
      }
      await sleep(delay, signal);
    }
  }

  private async attempt(url: string, path: string, signal: AbortSignal | undefined): Promise<Attempt> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;
    try {
      const response = await this.options.fetch(url, {
        method: 'GET',
        headers: { authorization: `Bearer ${this.options.apiKey}`, accept: 'application/json' },
        signal: combined,
      });
      const text = await response.text();
      const requestId = response.headers.get('request-id') ?? undefined;
      if (response.ok) return { kind: 'ok', body: JSON.parse(text) };
      let problem: Problem = {};
      try {
        const parsed = JSON.parse(text) as unknown;
        if (parsed && typeof parsed === 'object') problem = parsed as Problem;
      } catch {
        problem = { detail: `HTTP ${response.status} from GET ${path} (not a problem+json body)` };
      }
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      const status = response.status;
      return {
        kind: 'error',
        error: errorFromResponse(status, problem, requestId, retryAfter),
        retryable: status === 429 || status >= 500,
        retryAfter,
      };
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.signal.aborted) {
        return { kind: 'failure', error: new TimeoutError(`GET ${path} got no response within ${this.options.timeoutMs} ms`) };
      }
      const reason = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      return {
        kind: 'failure',
        error: new ConnectionError(`GET ${path} could not reach ${this.options.baseUrl}: ${reason}`, { cause: err }),
      };
    } finally {
      clearTimeout(timer);
    }
  }
}
