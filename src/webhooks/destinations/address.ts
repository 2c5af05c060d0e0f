/**
 * Destination URLs: the scheme names the kind (https webhook, RabbitMQ, NATS JetStream), and
 * each kind's URL form and options are checked here, at registration; the host is checked again
 * before every delivery (checkDestination) under the same rules as a webhook URL's host
 * (url-safety.ts: public addresses only unless WSOPS_ALLOW_PRIVATE_WEBHOOKS, and the connection
 * goes to the checked address).
 *
 * - `amqps://USER:PASSWORD@HOST[:PORT]/VHOST` (RabbitMQ, AMQP 0-9-1 over TLS; port 5671 by
 *   default); `amqp://` (no TLS, port 5672) only where private webhooks are allowed. The
 *   password is split off here: the stored, displayed URL is `amqps://USER@HOST:PORT/VHOST`.
 * - `tls://HOST[:PORT]` (NATS over TLS, port 4222 by default); `nats://` (no TLS) only where
 *   private webhooks are allowed.
 */
import { AppError } from '../../errors.js';
import { checkTemplate, DEFAULT_ROUTING_KEY, DEFAULT_SUBJECT } from './templates.js';
import {
  type CheckedUrl,
  checkHost,
  checkWebhookUrl,
  MAX_WEBHOOK_URL_LENGTH,
  type Resolver,
  refuse,
  systemResolver,
  type UrlPolicy,
  withHint,
} from './url-safety.js';

export type DestinationKind = 'https' | 'rabbitmq' | 'nats';

/** The schemes of broker destinations, and whether each needs WSOPS_ALLOW_PRIVATE_WEBHOOKS (no TLS). */
const BROKER_SCHEMES: Readonly<Record<string, { kind: Exclude<DestinationKind, 'https'>; plain: boolean; port: number }>> = {
  'amqps:': { kind: 'rabbitmq', plain: false, port: 5671 },
  'amqp:': { kind: 'rabbitmq', plain: true, port: 5672 },
  'tls:': { kind: 'nats', plain: false, port: 4222 },
  'nats:': { kind: 'nats', plain: true, port: 4222 },
};

/** The kind a stored (or given) URL names by its scheme; anything else is a webhook URL. */
export function kindOf(url: string): DestinationKind {
  const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(url)?.[1]?.toLowerCase() ?? '';
  return BROKER_SCHEMES[scheme]?.kind ?? 'https';
}

/** What a registration gives beside the URL (CLI flags, console fields, route members). */
export interface DestinationOptions {
  exchange?: string | undefined;
  routingKey?: string | undefined;
  subject?: string | undefined;
}

/** A checked registration: the URL to store and show (no password), the password to seal, the options to store. */
export interface ParsedDestination {
  kind: DestinationKind;
  url: string;
  password: string | null;
  exchange: string | null;
  routingKey: string | null;
  subject: string | null;
}

function invalid(param: string, rule: string, message: string): AppError {
  return new AppError('invalid_parameter', message, { param, rule });
}

/** RabbitMQ exchange names: letters, digits, hyphen, underscore, period, colon; at most 255 (the broker's rule). */
const EXCHANGE_NAME = /^[A-Za-z0-9_.:-]{1,255}$/;

/**
 * Checks a broker destination's URL form and options (not its host: checkDestination) and splits
 * off the password. Throws AppError invalid_parameter naming the parameter and the rule.
 */
export function parseDestination(raw: string, options: DestinationOptions, policy: UrlPolicy): ParsedDestination {
  const kind = kindOf(raw);
  const given = (name: keyof DestinationOptions) => options[name] !== undefined && options[name] !== '';
  if (kind === 'https') {
    for (const name of ['exchange', 'routingKey', 'subject'] as const)
      if (given(name))
        throw invalid(
          flag(name),
          'destination_option',
          `${flag(name)} is for broker destinations (amqps:// or tls://); this URL is a webhook`,
        );
    return { kind, url: raw, password: null, exchange: null, routingKey: null, subject: null };
  }
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw refuse('too_long', `destination URL must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(
      'malformed',
      `destination URL is not a valid URL; give one such as ${kind === 'rabbitmq' ? 'amqps://user:password@broker.example.com:5671/vhost' : 'tls://nats.example.com:4222'}`,
    );
  }
  const scheme = BROKER_SCHEMES[url.protocol];
  if (!scheme) throw refuse('scheme', `destination URL scheme ${url.protocol} is not known`);
  if (scheme.plain && !policy.allowPrivate) {
    throw refuse(
      'scheme',
      `${url.protocol}// sends without TLS and is allowed only where private webhooks are (WSOPS_ALLOW_PRIVATE_WEBHOOKS=true, test and development); use ${kind === 'rabbitmq' ? 'amqps://' : 'tls://'}`,
    );
  }
  if (url.hostname === '') throw refuse('host', 'destination URL must name a host');
  if (url.search !== '' || url.hash !== '') throw refuse('malformed', 'destination URL takes no query (?…) or fragment (#…)');
  const port = url.port === '' ? scheme.port : Number(url.port);
  const host = url.hostname;
  const hostPort = `${host}:${port}`;
  if (kind === 'rabbitmq') {
    if (given('subject'))
      throw invalid(
        'subject',
        'destination_option',
        '--subject is for NATS destinations (tls://); a RabbitMQ destination takes --exchange and --routing-key',
      );
    const user = decode(url.username);
    const password = decode(url.password);
    if (user === '' || password === '') {
      throw refuse('userinfo', 'a RabbitMQ destination URL carries its credentials: amqps://USER:PASSWORD@HOST:PORT/VHOST');
    }
    const path = url.pathname === '' || url.pathname === '/' ? '' : url.pathname.slice(1);
    if (path.includes('/')) throw refuse('malformed', 'the RabbitMQ vhost is one path segment (encode a / in it as %2F)');
    const vhost = decode(path);
    const exchange = options.exchange?.trim() ?? '';
    if (exchange === '')
      throw invalid('exchange', 'exchange', 'a RabbitMQ destination needs --exchange NAME (the exchange the events are published to)');
    if (!EXCHANGE_NAME.test(exchange) || exchange.startsWith('amq.'))
      throw invalid(
        'exchange',
        'exchange',
        `exchange "${exchange.slice(0, 60)}" is not a name one may publish to: letters, digits, - _ . : (at most 255), not amq.*`,
      );
    const routingKey = options.routingKey?.trim() || DEFAULT_ROUTING_KEY;
    checkTemplate(routingKey, 'routing_key');
    // The displayed URL: user, host, port and vhost; never the password.
    const shown = `${url.protocol}//${encodeURIComponent(user)}@${hostPort}/${encodeURIComponent(vhost)}`;
    return { kind, url: shown, password, exchange, routingKey, subject: null };
  }
  if (given('exchange') || given('routingKey'))
    throw invalid(
      given('exchange') ? 'exchange' : 'routing_key',
      'destination_option',
      '--exchange and --routing-key are for RabbitMQ destinations (amqps://); a NATS destination takes --subject',
    );
  if (url.username !== '' || url.password !== '')
    throw refuse('userinfo', 'a NATS destination URL is tls://HOST:PORT, without a user or password');
  if (url.pathname !== '' && url.pathname !== '/') throw refuse('malformed', 'a NATS destination URL is tls://HOST:PORT, without a path');
  const subject = options.subject?.trim() || DEFAULT_SUBJECT;
  checkTemplate(subject, 'subject');
  return { kind, url: `${url.protocol}//${hostPort}`, password: null, exchange: null, routingKey: null, subject };
}

function flag(name: keyof DestinationOptions): string {
  return name === 'routingKey' ? 'routing_key' : name;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw refuse('malformed', 'destination URL has a malformed percent-encoding');
  }
}

/** A stored broker URL, read for connecting: scheme, host, port, user and vhost. */
export interface BrokerAddress {
  tls: boolean;
  host: string;
  port: number;
  user: string;
  vhost: string;
}

export function brokerAddress(stored: string): BrokerAddress {
  const url = new URL(stored);
  const scheme = BROKER_SCHEMES[url.protocol];
  if (!scheme) throw new Error(`not a broker destination URL: ${url.protocol}`);
  const path = url.pathname === '' || url.pathname === '/' ? '' : url.pathname.slice(1);
  return {
    tls: !scheme.plain,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? scheme.port : Number(url.port),
    user: decodeURIComponent(url.username),
    vhost: decodeURIComponent(path) || '/',
  };
}

/**
 * The rules that hold at registration and before every delivery: for a webhook, the webhook URL
 * rules; for a broker, its scheme (no plain connection unless private webhooks are allowed) and
 * host (every address public unless private ones are allowed). Returns the addresses to connect to.
 */
export async function checkDestination(stored: string, policy: UrlPolicy, resolve: Resolver = systemResolver): Promise<CheckedUrl> {
  return withHint(async () => {
    const url = new URL(stored);
    const scheme = BROKER_SCHEMES[url.protocol];
    if (!scheme) throw refuse('scheme', `destination URL scheme ${url.protocol} is not known`);
    if (scheme.plain && !policy.allowPrivate)
      throw refuse('scheme', `${url.protocol}// (no TLS) is allowed only where private webhooks are`);
    return { url, addresses: await checkHost(url.hostname, policy, resolve) };
  }, policy);
}

/** The rules of an endpoint's stored URL, whatever its kind: at re-verification and before every delivery. */
export function checkEndpointUrl(stored: string, policy: UrlPolicy, resolve: Resolver = systemResolver): Promise<CheckedUrl> {
  return kindOf(stored) === 'https' ? checkWebhookUrl(stored, policy, resolve) : checkDestination(stored, policy, resolve);
}
