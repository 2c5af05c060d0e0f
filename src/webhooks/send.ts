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

export type ErrorClass = 'http_status' | 'redirect' | 'timeout' | 'tls' | 'connection' | 'url_refused' | 'network';

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

/** One HTTP agent per endpoint and checked address set, reused across attempts (keep-alive). */
export class AgentPool {
  private readonly agents = new Map<string, Agent>();

  get(endpointId: string, addresses: readonly string[]): Agent {
    const key = `${endpointId}|${addresses.join(',')}`;
    let agent = this.agents.get(key);
    if (!agent) {
      agent = new Agent({
        connect: { lookup: pinnedLookup(addresses), timeout: ATTEMPT_TIMEOUT_MS, rejectUnauthorized: true },
        headersTimeout: ATTEMPT_TIMEOUT_MS,
        bodyTimeout: ATTEMPT_TIMEOUT_MS,
        connections: 64,
        pipelining: 1,
      });
      this.agents.set(key, agent);
    }
    return agent;
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.destroy()));
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
