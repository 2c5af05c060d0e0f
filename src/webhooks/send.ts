/**
 * One delivery attempt over HTTP: POST, 10 s for connect and response, redirects and TLS
 * errors are failures and nothing is followed, the connection goes to the address that was
 * checked, and at most 4 KB of the response body is kept. Never throws: every failure of the
 * destination is an outcome.
 */
import { Agent, request } from 'undici';
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

export async function sendAttempt(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  body: string,
  monotonicNow: () => number = performance.now.bind(performance),
): Promise<AttemptOutcome> {
  const started = monotonicNow();
  const elapsed = () => Math.round(monotonicNow() - started);
  try {
    const res = await request(url, {
      method: 'POST',
      headers,
      body,
      dispatcher: agent,
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let read = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      read += chunk.length;
      if (keptBytes < KEPT_BODY_BYTES) {
        const part = chunk.subarray(0, KEPT_BODY_BYTES - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      if (read > DRAIN_LIMIT_BYTES) {
        res.body.destroy();
        break;
      }
    }
    const text = Buffer.concat(kept).toString('utf8');
    const status = res.statusCode;
    if (status >= 200 && status < 300)
      return { ok: true, statusCode: status, errorClass: null, error: null, body: text, latencyMs: elapsed() };
    const redirect = status >= 300 && status < 400;
    return {
      ok: false,
      statusCode: status,
      errorClass: redirect ? 'redirect' : 'http_status',
      error: redirect ? `HTTP ${status} redirect (redirects are never followed)` : `HTTP ${status}`,
      body: text,
      latencyMs: elapsed(),
    };
  } catch (err) {
    const { errorClass, message } = classifyError(err);
    return { ok: false, statusCode: null, errorClass, error: message, body: null, latencyMs: elapsed() };
  }
}
