/**
 * URL rules for webhook endpoints, checked at registration and again before every delivery.
 *
 * A URL must be `https` on port 443, carry no userinfo, name a host, fit in 2048 characters, and
 * every address its host resolves to must be public. The addresses that were checked are handed
 * back so the dispatcher connects to one of them (`pinnedLookup`) instead of resolving again: a
 * second lookup could answer differently (DNS rebinding).
 *
 * IP literals in any spelling (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`, `[::ffff:7f00:1]`)
 * are normalized by WHATWG URL parsing (`new URL`) and judged as the address they denote.
 *
 * `WSOPS_ALLOW_PRIVATE_WEBHOOKS` (policy `allowPrivate`, test and development only) lifts the
 * scheme, port, host-name and address rules; the URL must still parse, carry no userinfo and
 * resolve.
 */
import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP, isIPv4, isIPv6 } from 'node:net';
import { AppError } from '../../errors.js';

/** Resolves a host name to every address it has (IPv4 and IPv6, in resolver order). */
export type Resolver = (hostname: string) => Promise<string[]>;

export interface UrlPolicy {
  /** WSOPS_ALLOW_PRIVATE_WEBHOOKS: lets the URL be http, any port, loopback/private (test and development only). */
  allowPrivate: boolean;
  /** How long a DNS lookup may take before the host counts as unresolvable. Default 5000 ms. */
  dnsTimeoutMs?: number;
}

/** A URL that passed the rules, with the addresses that were checked: connect to one of these. */
export interface CheckedUrl {
  url: URL;
  addresses: string[];
}

export type UrlRule = 'scheme' | 'port' | 'userinfo' | 'host' | 'private_address' | 'unresolvable' | 'too_long' | 'malformed';

export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const DEFAULT_DNS_TIMEOUT_MS = 5000;

/** The default resolver: the system resolver (getaddrinfo), every address, in the order it answered. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => a.address);
};

export function refuse(rule: UrlRule, message: string): AppError {
  return new AppError('invalid_parameter', message, { param: 'url', rule });
}

const PUBLIC_INTERNET = 'endpoints must be reachable from the public internet';

/** The rules WSOPS_ALLOW_PRIVATE_WEBHOOKS lifts; the others hold in every environment. */
const LIFTED_BY_ALLOW_PRIVATE: ReadonlySet<UrlRule> = new Set(['scheme', 'port', 'host', 'private_address']);

/** True when WSOPS_ALLOW_PRIVATE_WEBHOOKS would let a URL refused under this rule through. */
export function liftedByAllowPrivate(rule: unknown): boolean {
  return LIFTED_BY_ALLOW_PRIVATE.has(rule as UrlRule);
}

/**
 * Appended to a refusal the setting would lift: a newcomer testing on one machine meets these
 * first, and the setting is otherwise only in the settings table.
 */
export const ALLOW_PRIVATE_HINT =
  'to deliver to a receiver on this machine or a private network, set WSOPS_ALLOW_PRIVATE_WEBHOOKS=true for the server that delivers and for the CLI or console that registers (test and development only; refused when WSOPS_ENV=live)';

/**
 * Checks a webhook URL against the rules and resolves its host. Throws AppError
 * `invalid_parameter` with `{ param: 'url', rule }`; its message names the rule (`[rule: scheme]`)
 * and, for a rule WSOPS_ALLOW_PRIVATE_WEBHOOKS lifts, the setting.
 */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy, resolve: Resolver = systemResolver): Promise<CheckedUrl> {
  return withHint(() => checkRules(raw, policy, resolve), policy);
}

/** Runs a URL check; a refusal names its rule and, for a rule WSOPS_ALLOW_PRIVATE_WEBHOOKS lifts, the setting. */
export async function withHint<T>(check: () => Promise<T>, policy: UrlPolicy): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (!(err instanceof AppError) || err.extra['param'] !== 'url') throw err;
    const rule = err.extra['rule'];
    const hint = policy.allowPrivate !== true && liftedByAllowPrivate(rule) ? `; ${ALLOW_PRIVATE_HINT}` : '';
    throw new AppError('invalid_parameter', `${err.message} [rule: ${String(rule)}]${hint}`, err.extra);
  }
}

async function checkRules(raw: string, policy: UrlPolicy, resolve: Resolver): Promise<CheckedUrl> {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw refuse('malformed', 'webhook URL is empty; give an absolute https URL such as https://hooks.example.com/wsops');
  }
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    throw refuse('too_long', `webhook URL must be at most ${MAX_WEBHOOK_URL_LENGTH} characters (got ${raw.length})`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('malformed', `webhook URL ${quote(raw)} is not a valid absolute URL; give one such as https://hooks.example.com/wsops`);
  }
  // Normalization (percent-encoding, punycode) can lengthen the URL; the stored form must fit too.
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) {
    throw refuse('too_long', `webhook URL must be at most ${MAX_WEBHOOK_URL_LENGTH} characters (got ${url.href.length} once normalized)`);
  }

  const allowPrivate = policy.allowPrivate === true;
  if (allowPrivate) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw refuse('scheme', `webhook URL must use https or http (got ${url.protocol})`);
    }
  } else if (url.protocol !== 'https:') {
    throw refuse('scheme', `webhook URL must use https (got ${url.protocol})`);
  }

  if (url.username !== '' || url.password !== '') {
    throw refuse(
      'userinfo',
      'webhook URL must not contain a user name or password (user:pass@ before the host); remove it, deliveries are authenticated by their signature',
    );
  }

  // WHATWG URL drops the port when it is the scheme's default, so for https an explicit :443 reads as ''.
  if (!allowPrivate && url.port !== '') {
    throw refuse('port', `webhook URL must use port 443 (got ${url.port}); remove the port or use :443`);
  }

  return { url, addresses: await checkHost(url.hostname, policy, resolve) };
}

/**
 * The host rules alone (a name, not local, every resolved address public unless private
 * addresses are allowed), returning the checked addresses to connect to. Shared by the
 * broker destinations (destinations/address.ts), whose URLs have their own scheme and port
 * rules. Throws the same refusals as checkWebhookUrl, without its hint (add it with withHint).
 */
export async function checkHost(host: string, policy: UrlPolicy, resolve: Resolver = systemResolver): Promise<string[]> {
  const allowPrivate = policy.allowPrivate === true;
  if (host === '') {
    throw refuse('host', 'webhook URL must name a host');
  }

  const literal = ipLiteral(host);
  let addresses: string[];
  if (literal !== null) {
    addresses = [literal];
  } else {
    if (!allowPrivate) checkHostName(host);
    addresses = await resolveHost(host, resolve, policy.dnsTimeoutMs ?? DEFAULT_DNS_TIMEOUT_MS);
  }

  if (!allowPrivate) {
    for (const address of addresses) {
      const reason = nonPublicReason(address);
      if (reason === null) continue;
      const where =
        literal !== null ? `webhook URL host ${host} is ${reason}` : `webhook URL host ${host} resolves to ${address}, ${reason}`;
      throw refuse('private_address', `${where}; ${PUBLIC_INTERNET}`);
    }
  }
  return addresses;
}

/** The address an IP-literal host denotes (brackets removed), or null for a host name. */
function ipLiteral(host: string): string | null {
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1);
  // WHATWG URL has already turned every IPv4 spelling into dotted decimal.
  return isIPv4(host) ? host : null;
}

const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.home.arpa'];

/** Host-name rules applied before any DNS lookup. */
function checkHostName(host: string): void {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === 'localhost' || LOCAL_SUFFIXES.some((suffix) => name.endsWith(suffix))) {
    throw refuse('host', `webhook URL host ${host} is a local name; use a public DNS name (${PUBLIC_INTERNET})`);
  }
  if (!name.includes('.')) {
    throw refuse(
      'host',
      `webhook URL host ${host} is a single-label name; use a fully qualified public DNS name such as hooks.example.com`,
    );
  }
  if (name.split('.').some((label) => label === '')) {
    throw refuse('host', `webhook URL host ${host} has an empty label; check the host name`);
  }
}

async function resolveHost(host: string, resolve: Resolver, timeoutMs: number): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(refuse('unresolvable', `webhook URL host ${host} did not resolve within ${timeoutMs / 1000} s; check the host name`)),
      timeoutMs,
    );
  });
  let answers: string[];
  try {
    answers = await Promise.race([resolve(host), timeout]);
  } catch (err) {
    if (err instanceof AppError) throw err;
    const code = (err as { code?: unknown } | null)?.code;
    const why = typeof code === 'string' ? ` (${code})` : '';
    throw refuse('unresolvable', `webhook URL host ${host} does not resolve${why}; check the host name`);
  } finally {
    clearTimeout(timer);
  }
  const addresses = [...new Set(answers)];
  if (addresses.length === 0) {
    throw refuse('unresolvable', `webhook URL host ${host} does not resolve to any address; check the host name`);
  }
  for (const address of addresses) {
    if (isIP(address) === 0) {
      throw refuse('unresolvable', `webhook URL host ${host} resolved to ${quote(address)}, which is not an IP address`);
    }
  }
  return addresses;
}

function quote(s: string): string {
  return JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);
}

// ---------------------------------------------------------------------------------------------
// Address classification (IANA IPv4 and IPv6 special-purpose address registries).

type Range = readonly [network: string, prefix: number];

function table(family: 'ipv4' | 'ipv6', rows: ReadonlyArray<readonly [reason: string, ranges: readonly Range[]]>) {
  return rows.map(([reason, ranges]) => {
    const list = new BlockList();
    for (const [network, prefix] of ranges) list.addSubnet(network, prefix, family);
    return { reason, list };
  });
}

/** IPv4 ranges that are not public; first match names the reason. */
const IPV4_TABLE = table('ipv4', [
  ['an unspecified ("this network") address', [['0.0.0.0', 8]]],
  ['a loopback address', [['127.0.0.0', 8]]],
  [
    'a private address',
    [
      ['10.0.0.0', 8],
      ['172.16.0.0', 12],
      ['192.168.0.0', 16],
    ],
  ],
  ['a carrier-grade NAT (shared) address', [['100.64.0.0', 10]]],
  ['a link-local address', [['169.254.0.0', 16]]],
  ['a reserved address (IETF protocol assignments)', [['192.0.0.0', 24]]],
  [
    'a documentation address',
    [
      ['192.0.2.0', 24],
      ['198.51.100.0', 24],
      ['203.0.113.0', 24],
    ],
  ],
  ['a reserved address (deprecated 6to4 relay anycast)', [['192.88.99.0', 24]]],
  ['a benchmarking address', [['198.18.0.0', 15]]],
  ['a multicast address', [['224.0.0.0', 4]]],
  ['the broadcast address', [['255.255.255.255', 32]]],
  ['a reserved address', [['240.0.0.0', 4]]],
]);

/** IPv6 ranges that are not public, inside or outside 2000::/3; first match names the reason. */
const IPV6_TABLE = table('ipv6', [
  ['a discard-only address', [['100::', 64]]],
  ['a NAT64 local-use address (its embedded IPv4 address cannot be judged)', [['64:ff9b:1::', 48]]],
  ['a Teredo address', [['2001::', 32]]],
  [
    'an ORCHID address',
    [
      ['2001:10::', 28],
      ['2001:20::', 28],
    ],
  ],
  [
    'a documentation address',
    [
      ['2001:db8::', 32],
      ['3fff::', 20],
    ],
  ],
  ['a reserved address (IETF protocol assignments)', [['2001::', 23]]],
  ['a segment-routing (SRv6 SID) address', [['5f00::', 16]]],
  ['a unique-local address', [['fc00::', 7]]],
  ['a link-local address', [['fe80::', 10]]],
  ['a site-local (deprecated) address', [['fec0::', 10]]],
  ['a multicast address', [['ff00::', 8]]],
]);

const GLOBAL_UNICAST_V6 = new BlockList();
GLOBAL_UNICAST_V6.addSubnet('2000::', 3, 'ipv6');

function v4Reason(address: string): string | null {
  for (const { reason, list } of IPV4_TABLE) if (list.check(address, 'ipv4')) return reason;
  return null;
}

/** The eight 16-bit groups of a valid IPv6 address (no zone). */
function ipv6Groups(address: string): number[] {
  // Let WHATWG serialize it: compressed lowercase hex, never a dotted-quad tail.
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const gap = canonical.indexOf('::');
  if (gap === -1) return parse(canonical);
  const head = parse(canonical.slice(0, gap));
  const tail = parse(canonical.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

function v4From(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

function embeddedReason(form: string, v4: string): string | null {
  const inner = v4Reason(v4);
  return inner === null ? null : `${form} embedding ${v4} (${inner})`;
}

function v6Reason(address: string): string | null {
  const g = ipv6Groups(address);
  const at = (i: number): number => g[i] ?? 0;
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);

  if (zeroUpTo(8)) return 'the unspecified address';
  if (zeroUpTo(7) && at(7) === 1) return 'the loopback address';
  // ::ffff:0:0/96 IPv4-mapped: the connection goes to the embedded IPv4 address.
  if (zeroUpTo(5) && at(5) === 0xffff) return embeddedReason('an IPv4-mapped address', v4From(at(6), at(7)));
  // ::/96 IPv4-compatible (deprecated by RFC 4291) and ::ffff:0:0:0/96 IPv4-translated.
  if (zeroUpTo(6)) return `a deprecated IPv4-compatible address (embedding ${v4From(at(6), at(7))})`;
  if (zeroUpTo(4) && at(4) === 0xffff && at(5) === 0) return `an IPv4-translated address (embedding ${v4From(at(6), at(7))})`;
  // 64:ff9b::/96 NAT64 well-known prefix: the translator connects to the embedded IPv4 address.
  if (at(0) === 0x64 && at(1) === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    return embeddedReason('a NAT64 address', v4From(at(6), at(7)));
  }
  // 2002::/16 6to4: the relay connects to the embedded IPv4 address.
  if (at(0) === 0x2002) return embeddedReason('a 6to4 address', v4From(at(1), at(2)));

  for (const { reason, list } of IPV6_TABLE) if (list.check(address, 'ipv6')) return reason;
  if (!GLOBAL_UNICAST_V6.check(address, 'ipv6')) return 'a reserved address (outside the IPv6 global unicast range 2000::/3)';
  return null;
}

/**
 * Why an address is not public, as a phrase such as `a private address` or
 * `an IPv4-mapped address embedding 127.0.0.1 (a loopback address)`; null when it is public.
 * Anything that is not a plain IP address (including an IPv6 address with a zone) is not public.
 */
export function nonPublicReason(address: string): string | null {
  if (isIPv4(address)) return v4Reason(address);
  if (address.includes('%')) return 'a scoped (zoned) IPv6 address';
  if (isIPv6(address)) return v6Reason(address);
  return 'not an IP address';
}

/** True when every connection to this address would go to the public internet. */
export function isPublicAddress(address: string): boolean {
  return nonPublicReason(address) === null;
}

// ---------------------------------------------------------------------------------------------
// Connecting to the checked address.

export type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** Same shape as the `lookup` option of `net.connect`, `tls.connect` and undici's `connect` options. */
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

/**
 * A `lookup` function that never consults DNS: it answers with the first checked address (or,
 * when the caller asks for one family, the first checked address of that family), as a list
 * when `options.all` is set. TLS still uses the URL's host name for SNI and certificate checks.
 */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const pinned: LookupAddress[] = addresses.map((address) => {
    const family = isIP(address);
    if (family === 0) throw new TypeError(`pinnedLookup: ${JSON.stringify(address)} is not an IP address`);
    return { address, family };
  });
  if (pinned.length === 0) throw new TypeError('pinnedLookup: at least one checked address is required');

  return (hostname, options, callback) => {
    // Tolerate the dns.lookup(hostname, callback) form.
    if (typeof options === 'function') {
      callback = options as LookupCallback;
      options = {};
    }
    const family = options?.family === 'IPv4' ? 4 : options?.family === 'IPv6' ? 6 : (options?.family ?? 0);
    const chosen = family === 4 || family === 6 ? pinned.find((p) => p.family === family) : pinned[0];
    const all = options?.all === true;
    process.nextTick(() => {
      if (chosen === undefined) {
        const err: NodeJS.ErrnoException = new Error(`no checked IPv${family} address for ${hostname}`);
        err.code = 'ENOTFOUND';
        callback(err, all ? [] : '');
      } else if (all) {
        callback(null, [{ address: chosen.address, family: chosen.family }]);
      } else {
        callback(null, chosen.address, chosen.family);
      }
    });
  };
}
