/**
 * Races across real API processes (test/helpers/api-processes.ts): the same request sent many
 * times at once, handed to the processes in turn, as several hosts behind a load balancer would
 * receive it. Console forms are posted over real HTTP with a session made through the harness
 * (sessions live in the database, so any process accepts them). A round that broke is counted,
 * not thrown at once, so a failure says how often the guarantee broke.
 */
import { request as httpRequest } from 'node:http';
import { type ApiProcesses, startApiProcesses } from './api-processes.js';
import { encodeForm } from './console.js';

export interface HttpAnswer {
  status: number;
  /** The Location header of a redirect ('' when none). */
  location: string;
  /** The session cookie set by the answer (`wsops_console=...`), if any. */
  cookie: string | undefined;
  etag: string;
  body: string;
}

/**
 * The console answers only at WSOPS_BASE_URL's host (anything else is 421): requests go to a
 * process's port with the base URL's Host header, as through a proxy. Node's fetch cannot set
 * Host, hence node:http.
 */
export function request(
  url: string,
  init: { method?: string; host?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: init.method ?? 'GET',
        headers: { ...(init.host ? { host: init.host } : {}), ...init.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const cookie = (res.headers['set-cookie'] ?? [])
            .find((c) => c.startsWith('wsops_console=') && !c.startsWith('wsops_console=;'))
            ?.split(';')[0];
          resolve({
            status: res.statusCode ?? 0,
            location: String(res.headers.location ?? ''),
            cookie,
            etag: String(res.headers.etag ?? ''),
            body: Buffer.concat(chunks).toString(),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** POSTs a urlencoded form to the console of a process as a browser would; `cookie` is the session's. */
export function postForm(
  url: string,
  host: string,
  form: Record<string, string | readonly string[]>,
  cookie?: string,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return request(url, {
    method: 'POST',
    host,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}), ...headers },
    body: encodeForm(form),
  });
}

/** An operator request to an internal listener (JSON, merge patch or NDJSON body). */
export function operatorRequest(
  url: string,
  token: string,
  init: { method: string; body?: string; contentType?: string; headers?: Record<string, string> },
): Promise<HttpAnswer> {
  return request(url, {
    method: init.method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body === undefined ? {} : { 'content-type': init.contentType ?? 'application/json' }),
      ...init.headers,
    },
    body: init.body,
  });
}

/** Two API processes on `databaseUrl`, both listeners of each answering. */
export function startRacers(databaseUrl: string, env: Record<string, string> = {}): Promise<ApiProcesses> {
  return startApiProcesses(databaseUrl, 2, env);
}

/**
 * Starts `count` calls of `send` at once, the i-th on `urls[i % urls.length]`, and waits for
 * them all. Returns the answers in call order.
 */
export function spread<T>(count: number, urls: readonly string[], send: (url: string, i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => send(urls[i % urls.length] as string, i)));
}

/** The rounds of a race: `broken` lists what each round that broke the guarantee saw. */
export class Rounds {
  readonly broken: string[] = [];
  constructor(readonly total: number) {}

  /** Records a round: `held` false keeps `seen` for the failure message. */
  record(round: number, held: boolean, seen: string): void {
    if (!held) this.broken.push(`round ${round + 1}: ${seen}`);
  }

  /** The failure message: how many rounds of how many broke, and what they saw. */
  summary(what: string): string {
    return `${what}: broken in ${this.broken.length} of ${this.total} rounds\n${this.broken.join('\n')}`;
  }
}
