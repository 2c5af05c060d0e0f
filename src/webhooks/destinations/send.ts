/**
 * One delivery attempt over HTTP: POST, 10 s for connect and response, redirects and TLS
 * errors are failures and nothing is followed, the connection goes to the address that was
 * checked, and at most 4 KB of the response body is kept. Never throws: every failure of the
 * destination is an outcome.
 */
import { Agent, type Dispatcher } from 'undici';
import { pinnedLookup } from './url-safety.js';

export const ATTEMPT_TIMEOUT_MS = 10_000;
export const KEPT_BODY_BYTES = 4096;
/** Read at most this much to keep a connection reusable; beyond it the socket is dropped. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/** Failures of the destination, then faults of one endpoint's setup in wsops (a secret that cannot be decrypted) or of wsops itself. */
export type ErrorClass =
  | 'http_status'
  | 'redirect'
  | 'timeout'
  | 'tls'
  | 'connection'
  | 'url_refused'
  | 'network'
  | 'broker_refused'
  | 'auth'
  | 'secret_unavailable'
  | 'internal_error';

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  errorClass: ErrorClass | null;
  /** Human summary of a failure, kept on the endpoint as its last failure. */
  error: string | null;
  body: string | null;
  latencyMs: number;
}

export function classifyError(err: unknown): { errorClass: ErrorClass; message: string } {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const message = `${code ? `${code}: ` : ''}${e.cause?.message ?? e.message ?? String(err)}`.slice(0, 300);
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(code)) return { errorClass: 'timeout', message };
  if (/CERT|^ERR_TLS|^ERR_SSL|UNABLE_TO|SELF_SIGNED|EPROTO/.test(code)) return { errorClass: 'tls', message };
  if (/ECONNREFUSED|ECONNRESET|EPIPE|EHOSTUNREACH|ENETUNREACH|UND_ERR_SOCKET|UND_ERR_CLOSED/.test(code))
    return { errorClass: 'connection', message };
  return { errorClass: 'network', message };
}

export interface AgentPoolOptions {
  /** An agent unused this long is closed (its keep-alive sockets with it). */
  idleMs?: number;
  /** Monotonic milliseconds (injectable for tests). */
  now?: () => number;
}

export const AGENT_IDLE_MS = 60_000;

interface PooledAgent {
  agent: Agent;
  inUse: number;
  lastUsed: number;
}

/**
 * One HTTP agent per endpoint and checked address set, reused across attempts (keep-alive).
 * Agents unused for `idleMs` are closed, so a worker that once delivered to thousands of
 * endpoints (or to an endpoint whose addresses changed) does not keep their sockets forever.
 */
export class AgentPool {
  private readonly agents = new Map<string, PooledAgent>();
  private readonly idleMs: number;
  private readonly now: () => number;
  private readonly timer: NodeJS.Timeout;

  constructor(options: AgentPoolOptions = {}) {
    this.idleMs = options.idleMs ?? AGENT_IDLE_MS;
    this.now = options.now ?? performance.now.bind(performance);
    this.timer = setInterval(() => void this.evictIdle(), Math.max(1000, Math.min(this.idleMs, 30_000)));
    this.timer.unref();
  }

  /** How many agents are open. */
  get size(): number {
    return this.agents.size;
  }

  /** Runs `use` with the endpoint's agent; the agent is not evicted while in use. */
  async with<T>(endpointId: string, addresses: readonly string[], use: (agent: Agent) => Promise<T>): Promise<T> {
    const key = `${endpointId}|${addresses.join(',')}`;
    let pooled = this.agents.get(key);
    if (!pooled) {
      const agent = new Agent({
        connect: { lookup: pinnedLookup(addresses), timeout: ATTEMPT_TIMEOUT_MS, rejectUnauthorized: true },
        headersTimeout: ATTEMPT_TIMEOUT_MS,
        bodyTimeout: ATTEMPT_TIMEOUT_MS,
        connections: 64,
        pipelining: 1,
      });
      pooled = { agent, inUse: 0, lastUsed: this.now() };
      this.agents.set(key, pooled);
    }
    pooled.inUse++;
    try {
      return await use(pooled.agent);
    } finally {
      pooled.inUse--;
      pooled.lastUsed = this.now();
    }
  }

  /** Closes the agents that are not in use and were last used `idleMs` ago or more. Returns how many. */
  async evictIdle(): Promise<number> {
    const cutoff = this.now() - this.idleMs;
    const idle = [...this.agents].filter(([, p]) => p.inUse === 0 && p.lastUsed <= cutoff);
    for (const [key] of idle) this.agents.delete(key);
    await Promise.all(idle.map(([, p]) => p.agent.close().catch(() => p.agent.destroy())));
    return idle.length;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all([...this.agents.values()].map((p) => p.agent.destroy()));
    this.agents.clear();
  }
}

/**
 * One POST through the endpoint's agent. Undici's `dispatch` with a handler of our own, not
 * `request()`: that builds a readable stream for each response and wants a signal per request,
 * and at a high delivery rate those are a large share of the worker's CPU (ADR 35). `deadline` bounds
 * the attempt (10 s from its start); the attempts of one batch start together and share one.
 */
export function sendAttempt(
  agent: Agent,
  url: URL | string,
  headers: Record<string, string>,
  body: string,
  deadline: AbortSignal = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
  monotonicNow: () => number = performance.now.bind(performance),
): Promise<AttemptOutcome> {
  const started = monotonicNow();
  const target = typeof url === 'string' ? new URL(url) : url;
  return new Promise((resolve) => {
    let status = 0;
    let read = 0;
    let settled = false;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let controller: Dispatcher.DispatchController | undefined;
    const onDeadline = () => controller?.abort(deadline.reason as Error);
    const settle = (outcome: Omit<AttemptOutcome, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      deadline.removeEventListener('abort', onDeadline);
      resolve({ ...outcome, latencyMs: Math.round(monotonicNow() - started) });
    };
    const answered = () => {
      const text = Buffer.concat(kept).toString('utf8');
      if (status >= 200 && status < 300) return settle({ ok: true, statusCode: status, errorClass: null, error: null, body: text });
      const redirect = status >= 300 && status < 400;
      settle({
        ok: false,
        statusCode: status,
        errorClass: redirect ? 'redirect' : 'http_status',
        error: redirect ? `HTTP ${status} redirect (redirects are never followed)` : `HTTP ${status}`,
        body: text,
      });
    };
    const failed = (err: unknown) => {
      const { errorClass, message } = classifyError(err);
      settle({ ok: false, statusCode: null, errorClass, error: message, body: null });
    };
    if (deadline.aborted) return failed(deadline.reason);
    deadline.addEventListener('abort', onDeadline, { once: true });
    try {
      agent.dispatch(
        { origin: target.origin, path: `${target.pathname}${target.search}`, method: 'POST', headers, body },
        {
          onRequestStart(c) {
            controller = c;
            if (deadline.aborted) c.abort(deadline.reason as Error);
          },
          onResponseStart(_c, statusCode) {
            status = statusCode;
          },
          onResponseData(c, chunk) {
            read += chunk.length;
            if (keptBytes < KEPT_BODY_BYTES) {
              const part = chunk.subarray(0, KEPT_BODY_BYTES - keptBytes);
              kept.push(part);
              keptBytes += part.length;
            }
            // The answer is known; what is left is not read: the socket is dropped instead.
            if (read > DRAIN_LIMIT_BYTES) {
              answered();
              c.abort(new Error('response body over the drain limit'));
            }
          },
          onResponseEnd: answered,
          onResponseError: (_c, err) => failed(err),
        },
      );
    } catch (err) {
      failed(err);
    }
  });
}
