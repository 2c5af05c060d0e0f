/**
 * X-Forwarded-For, checked to hold addresses before anything reads the client address from it
 * (request.ip: every throttle, key IP allowlist, last-use record and log line).
 *
 * Behind WSOPS_TRUSTED_PROXIES the client is the rightmost entry that is not a trusted proxy
 * (proxy-addr walks from the TCP peer leftwards). Each entry on that walk must be an IP
 * address; a port is dropped the way proxies write one (`203.0.113.7:8080`, `[2001:db8::1]:443`).
 * An entry that is not an address (`unknown`, `<script>`, a hostname) ends the walk: the client
 * is then the proxy that passed it on, and the log says so once, not for every request.
 */
import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { addressMatcher } from '../ip-ranges.js';

const V4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const V6_BRACKETED = /^\[([0-9A-Fa-f:.]+(?:%[0-9A-Za-z._~-]+)?)\](?::\d{1,5})?$/;

/** The address an X-Forwarded-For entry names, without a port; undefined when it names none. */
export function forwardedAddress(entry: string): string | undefined {
  const text = entry.trim();
  if (isIP(text)) return text.toLowerCase();
  const v4 = V4_WITH_PORT.exec(text)?.[1];
  if (v4 && isIP(v4) === 4) return v4;
  const v6 = V6_BRACKETED.exec(text)?.[1];
  if (v6 && isIP(v6) === 6) return v6.toLowerCase();
  return undefined;
}

export interface ForwardedCheck {
  /** The header to keep: the walked entries as addresses; undefined to drop it (the peer is the client). */
  header: string | undefined;
  /** The entry that was not an address, when one ended the walk. */
  rejected?: string;
}

/**
 * Walks X-Forwarded-For from the right as proxy-addr does, through `trusted` hops, and keeps
 * only the entries walked, each as a bare address. Called only when the TCP peer is trusted.
 */
export function checkForwardedFor(header: string, trusted: (address: string) => boolean): ForwardedCheck {
  const entries = header
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const kept: string[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as string;
    const address = forwardedAddress(entry);
    if (address === undefined) return { header: kept.length ? kept.reverse().join(', ') : undefined, rejected: entry };
    kept.push(address);
    if (!trusted(address)) break;
  }
  return { header: kept.length ? kept.reverse().join(', ') : undefined };
}

/** Rewrites X-Forwarded-For on every request from a trusted proxy, before any hook reads request.ip. */
export function checkForwardedAddresses(app: FastifyInstance, trustedProxies: readonly string[]): void {
  if (trustedProxies.length === 0) return;
  const trusted = addressMatcher(trustedProxies);
  let said = false;
  app.addHook('onRequest', (request, _reply, done) => {
    const raw = request.raw.headers['x-forwarded-for'];
    const peer = request.raw.socket?.remoteAddress;
    if (typeof raw !== 'string' || !peer || !trusted(peer)) return done();
    const checked = checkForwardedFor(raw, trusted);
    if (checked.header === undefined) delete request.raw.headers['x-forwarded-for'];
    else request.raw.headers['x-forwarded-for'] = checked.header;
    if (checked.rejected !== undefined && !said) {
      said = true;
      app.log.warn(
        { proxy: peer, forwarded_entry: checked.rejected.slice(0, 64) },
        'X-Forwarded-For from a trusted proxy holds an entry that is not an IP address; such requests are taken as coming from the proxy that passed the entry on (said once, not for every request). Check what the proxies in WSOPS_TRUSTED_PROXIES write into X-Forwarded-For.',
      );
    }
    done();
  });
}
