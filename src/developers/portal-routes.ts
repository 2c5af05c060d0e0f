/**
 * The developer portal at /developers: a getting-started page, the API reference rendered
 * from the served OpenAPI document by Scalar's standalone bundle (served from this server,
 * no CDN; src/vendor-files.ts), the event catalogue
 * and the error catalogue every problem `type` points at. Every page is generated from the
 * declarations the server uses (ERROR_CATALOGUE, ALL_EVENTS, the registers).
 *
 * The portal has its own CSP: scripts and everything else from this origin only; inline styles
 * are allowed because the renderer injects its stylesheet at run time.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../config.js';
import { ERROR_CATALOGUE, ERRORS_PAGE_PATH } from '../errors.js';
import { CHECKSUM_LENGTH, KEY_REGEX_SOURCE } from '../keys/key-format.js';
import { REGISTERS } from '../registers/catalogue.js';
import { vendorFile } from '../vendor-files.js';
import { ALL_EVENTS, type DataPart } from '../webhooks/events/event-types.js';
import { serveStaticDocument } from './static-documents.js';

/** What this file takes of the services built at start (services.ts). */
export interface PortalRoutesServices {
  config: Config;
}

export const PORTAL_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

const html = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const prose = (text: string) => html(text).replace(/`([^`]+)`/g, '<code>$1</code>');

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:1rem 1.5rem;color:#1b1f24}
nav a{margin-right:1rem}code,pre{font-family:ui-monospace,monospace;background:#f3f4f6;border-radius:4px}code{padding:0 .2em}
pre{padding:.75rem;overflow:auto}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${html(title)}</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/developers/assets/portal.css"></head>
<body>
<nav aria-label="Developer portal"><a href="/developers">Getting started</a><a href="/developers/reference">API reference</a><a href="/developers/events">Events</a><a href="${ERRORS_PAGE_PATH}">Errors</a><a href="/developers/openapi.json">OpenAPI document</a></nav>
<main>
${body}
</main>
</body>
</html>
`;
}

export function gettingStartedPage(baseUrl: string): string {
  const registers = REGISTERS.map(
    (r) => `<tr><td><code>${r.path}</code></td><td><code>client.${r.sdkName}</code></td><td><code>${r.scope}</code></td></tr>`,
  ).join('');
  return page(
    'wsops developer portal',
    `<h1>wsops developer portal</h1>
<h2 id="keys">API keys</h2>
<p>An administrator creates a key in the console (or <code>wsops key create --workspace W --scopes assets:read,people:read</code>). Send it on every request as <code>Authorization: Bearer svc_sk_…</code>. Hold it only on a server. A key reads only what its scopes name; <code>GET /api/v1/scopes</code> tells which it holds.</p>
<p><strong>Finding leaked keys.</strong> A key is <code>svc_sk_&lt;env&gt;_&lt;key_id&gt;_&lt;secret&gt;</code> and matches this regular expression:</p>
<pre>${html(KEY_REGEX_SOURCE)}</pre>
<p>The last ${CHECKSUM_LENGTH} characters of <code>&lt;secret&gt;</code> are a checksum: the CRC32 (as zlib computes it) of everything before them, <code>svc_sk_</code> included, written in base62 (<code>0-9A-Za-z</code>, most significant digit first) and padded with <code>0</code> to ${CHECKSUM_LENGTH} characters. A scanner that checks it reports real keys only; a key with a wrong checksum is refused before any lookup (the usual 401). Keys made before checksums were added keep working. For <a href="https://github.com/secretlint/secretlint">secretlint</a>, <code>@wsops/client</code> ships a rule that checks the checksum: <code>{"rules": [{"id": "@wsops/client/secretlint"}]}</code> in <code>.secretlintrc.json</code>. A pattern-only rule, which also finds keys made before checksums, is in the wsops repository (<code>docs/secretlint/.secretlintrc.json</code>).</p>
<p><strong>Rolling a key.</strong> “Roll” (console, or <code>wsops key roll --workspace W KEY_ID --grace 0|1h|24h|7d</code>) creates a successor with the same name, scopes and IP allowlist, shows its secret once, and revokes the old key after the grace; both work meanwhile. Keys expiring within 14 days are flagged in the console.</p>
<p><strong>Who makes keys.</strong> Keys are made by the workspace's console admins. Each admin can protect their sign-in with a second factor, an authenticator app (TOTP, with one-time recovery codes) or a passkey (WebAuthn); a workspace can require one for every admin, and can sign its admins in by single sign-on (OpenID Connect).</p>
<p><strong>IP allowlists.</strong> A key may be limited to CIDR ranges (IPv4 and IPv6). A request with a valid key from elsewhere is refused with 403 <a href="${ERRORS_PAGE_PATH}#ip_not_allowed"><code>ip_not_allowed</code></a>. Behind a reverse proxy the address is the client's as the proxies the operator trusts report it.</p>
<h2 id="client">The client</h2>
<p><code>@wsops/client</code> is not on the npm registry yet. Install the tarball your wsops operator gives you (made in a wsops checkout with <code>npm ci &amp;&amp; npm pack -w @wsops/client</code>); it needs Node.js 20.19 or later, and is an ES module that CommonJS code can also <code>require()</code>.</p>
<pre>npm install ./wsops-client-0.1.0.tgz

import { WsopsClient } from '@wsops/client';

const client = new WsopsClient({ apiKey: process.env.WSOPS_API_KEY, baseUrl: '${html(baseUrl)}' });
for await (const asset of client.assets.list({ status: 'ASSIGNED' })) console.log(asset.asset_tag);
const person = await client.people.get('per_…');</pre>
<p>Errors are typed (<code>AuthenticationError</code>, <code>PermissionError</code> with <code>missingScope</code>, <code>InvalidRequestError</code> with <code>param</code> and <code>code</code>, <code>NotFoundError</code>, <code>RateLimitError</code>, <code>ServerError</code>, <code>ConnectionError</code>, <code>TimeoutError</code>) and carry the <code>requestId</code>. 429, 5xx and network errors are retried with backoff, honouring <code>Retry-After</code>.</p>
<table><thead><tr><th>Register</th><th>Client</th><th>Scope</th></tr></thead><tbody>${registers}</tbody></table>
<h2 id="paging">Paging</h2>
<p>Lists are ordered by ascending <code>(updated_at, id)</code>. While <code>has_more</code> is true, pass <code>next_cursor</code> back as <code>cursor</code> with the same filters (<code>client.X.list()</code> does this for you; <code>listPage()</code> gives one page). A cursor finishes a walk; to resume later, use <code>updated_since</code>.</p>
<h2 id="deletions">Deletions</h2>
<p>A deleted record simply leaves the lists and sends no event. Each register's deletions feed, <code>GET /api/v1/{register}/deletions</code>, lists what was deleted as tombstones <code>{"id", "deleted_at"}</code>, ordered by ascending <code>(deleted_at, id)</code>, with the lists' rules: the register's scope, <code>limit</code>, a cursor bound to the feed, and <code>since</code> (strictly after, the format of <code>updated_since</code>). After each sync walk, follow it from the highest <code>deleted_at</code> you applied (less a few minutes) and delete your copy of each id <strong>only when its <code>updated_at</code> is older than <code>deleted_at</code></strong>. A record written again under a deleted id leaves the feed and is in the list again; <code>deleted_at</code> is always later than the deleted record's last <code>updated_at</code>.</p>
<pre>for await (const t of client.people.deletions({ since: lastDeletedAt })) removeIfOlder(t.id, t.deleted_at);</pre>
<p>Tombstones are kept for the operator's retention (<code>WSOPS_DELETION_RETENTION_DAYS</code>, at least 30 days, default 90). A <code>since</code> before it is 400 <a href="${ERRORS_PAGE_PATH}#deletions_beyond_retention"><code>deletions_beyond_retention</code></a>: walk the list in full, drop what it did not return, then follow the feed without <code>since</code>.</p>
<h2 id="events-api">Events: catching up</h2>
<p><code>GET /api/v1/events</code> lists the workspace's events oldest first, each exactly the body its webhook deliveries carry; filter with <code>types</code> (comma-separated) and <code>since</code> (events created at or after it); <code>limit</code> and the cursor are the lists'. <code>GET /api/v1/events/{id}</code> gives one. A key sees an event only if it holds the scope its type needs (the <a href="/developers/events">event catalogue</a> names it); verification events are never listed. After an outage, list the events since the <code>created</code> of the last one you processed (less a few minutes) and apply those whose id you have not applied: the event id is the idempotency key.</p>
<pre>for await (const event of client.events.list({ since: lastCreatedLessFiveMinutes, types: ['asset.assigned'] })) applyOnce(event);</pre>
<p>Events are kept for the operator's retention (<code>WSOPS_EVENT_RETENTION_DAYS</code>, default 30). A <code>since</code> before it is 400 <a href="${ERRORS_PAGE_PATH}#events_beyond_retention"><code>events_beyond_retention</code></a>: reconcile from the registers instead.</p>
<h2 id="mirror">Keeping a mirror current</h2>
<pre>WSOPS_API_KEY=svc_sk_… WSOPS_BASE_URL=${html(baseUrl)} npx wsops-mirror --once --registers assets,people</pre>
<p><code>wsops-mirror</code> keeps a copy in SQLite (default <code>sqlite:./wsops-mirror.db</code>) or PostgreSQL (<code>WSOPS_MIRROR_DATABASE_URL</code>): a full walk first, then walks from the highest <code>updated_at</code> seen less five minutes; every run also follows the deletions feed, so a deletion reaches the mirror on its next run; both positions move only when a run finished. A daily (or <code>--full</code>) walk removes what the walk did not see, and a run whose feed position fell behind the feed's retention walks in full by itself and says so. <code>--watch</code> polls; <code>--listen PORT</code> runs on each verified webhook.</p>
<h2 id="webhooks">Webhooks and their verification</h2>
<p>Register an endpoint in the console; each delivery is a POST signed in <code>X-Service-Signature: t=…,v1=…</code>. Verify the raw body, before parsing:</p>
<pre>import { verifyWebhook, WebhookSignatureError } from '@wsops/client';
const event = verifyWebhook(rawBody, req.headers['x-service-signature'], process.env.WSOPS_WEBHOOK_SECRET);</pre>
<p>or use a ready receiver: <code>nodeWebhookHandler</code>, <code>expressWebhookHandler</code>, <code>fastifyWebhookPlugin</code>, with an <code>IdempotencyGuard</code> keyed on the event id (deliveries are at least once). The <a href="/developers/events">event catalogue</a> lists each event's scope and data.</p>
<h3 id="standard-webhooks">Standard Webhooks</h3>
<p>An endpoint can also be sent the <a href="https://www.standardwebhooks.com">Standard Webhooks</a> headers beside <code>X-Service-Signature</code>: tick the box when registering it, choose it under <em>Signature headers</em> on its console page, or run <code>wsops endpoint signatures --workspace W ENDPOINT_ID --standard-webhooks on</code>. Each delivery then carries <code>webhook-id</code> (the event id, the same on every retry), <code>webhook-timestamp</code> and <code>webhook-signature: v1,&lt;base64&gt;</code> (one per secret during a rotation's grace period), so a receiver can verify with the official <code>standardwebhooks</code> library of its language and the endpoint's secret exactly as it was shown:</p>
<pre>import { Webhook } from 'standardwebhooks';
const event = new Webhook(process.env.WSOPS_WEBHOOK_SECRET).verify(rawBody, req.headers); // whsec_…</pre>
<h3 id="verification">The first verification</h3>
<p>A new endpoint is sent one signed <code>endpoint.verification</code> (<code>{"endpoint_id", "challenge"}</code>) as soon as it is registered, and becomes active when it answers with a 2xx. <strong>Events that happen before it is active are not delivered to it.</strong> Your receiver may answer the verification before it has the secret (it carries no register data); a receiver that refused it because it did not have the secret yet gets it again at once with <code>wsops endpoint verify --workspace W ENDPOINT_ID</code> or the endpoint page's <em>Resend verification</em> button, instead of waiting a minute for the retry.</p>
<h3 id="local">Testing webhooks locally</h3>
<p>Webhook URLs must be <code>https</code> on port 443 with a public address. To receive on your own machine, start the server, and run the CLI that registers the endpoint, with <code>WSOPS_ALLOW_PRIVATE_WEBHOOKS=true</code> (test and development only; refused when <code>WSOPS_ENV=live</code>). <code>wsops listen</code> is a ready receiver on 127.0.0.1 that checks each signature and prints the event:</p>
<pre>WSOPS_ALLOW_PRIVATE_WEBHOOKS=true npm start                   # the server that delivers
wsops listen --workspace W                                    # receiver on http://127.0.0.1:9911/
WSOPS_ALLOW_PRIVATE_WEBHOOKS=true wsops endpoint create --workspace W \
  --url http://127.0.0.1:9911/hooks --scopes assets:read --events asset.assigned</pre>
<p>A delivery the server refuses under the URL rules shows as <code>url_refused</code> in <code>wsops deliveries</code> and the console, with the rule that refused it.</p>`,
  );
}

function partText(name: string, part: DataPart): string {
  if (part.kind === 'record')
    return `<code>${name}</code>: ${prose(part.description)} Fields of <code>${part.register.path}</code>: ${part.fields.map((f) => `<code>${f}</code>`).join(', ')}.`;
  if (part.kind === 'field')
    return `<code>${name}</code>: ${prose(part.description)} (the <code>${part.register.path}</code> field <code>${part.field}</code>)`;
  return `<code>${name}</code>: ${prose(part.description)}`;
}

export function eventsPage(): string {
  const sections = Object.entries(ALL_EVENTS)
    .map(
      ([type, e]) => `<section id="${html(type)}">
<h2><code>${html(type)}</code></h2>
<p>${prose(e.description)}</p>
<p><strong>Scope:</strong> ${e.scope ? `<code>${e.scope}</code>` : 'none (sent to the endpoint itself)'}</p>
<ul>${Object.entries(e.data)
        .map(([name, part]) => `<li>${partText(name, part)}${e.optional?.includes(name) ? ' Present only in some events.' : ''}</li>`)
        .join('')}</ul>
</section>`,
    )
    .join('\n');
  return page(
    'wsops events',
    `<h1>Events</h1>
<p>Every delivery body is <code>{"id", "type", "created", "api_version": "1", "data"}</code>; the <code>id</code> is the idempotency key. <code>data</code> holds only fields the matching <code>/api/v1</code> resource returns. The schemas are in the <a href="/developers/openapi.json">OpenAPI document</a>'s <code>webhooks</code> section.</p>
${sections}`,
  );
}

export function errorsPage(): string {
  const rows = Object.entries(ERROR_CATALOGUE)
    .map(
      ([code, e]) => `<section id="${code}">
  <h2><code>${code}</code> <span class="status">${e.status} ${html(e.title)}</span></h2>
  <p>${prose(e.meaning)}</p>
  <p><strong>How to fix it:</strong> ${prose(e.fix)}</p>
</section>`,
    )
    .join('\n');
  return page(
    'wsops API errors',
    `<h1>wsops API errors</h1>
<p>Every error is an <code>application/problem+json</code> body (RFC 9457) with <code>type</code>, <code>title</code>, <code>status</code>, <code>detail</code>, a stable <code>code</code> listed below and the <code>request_id</code> of the request; also <code>param</code> on a 400 about one parameter, <code>missing_scope</code> on a 403 and <code>key_id</code> on a 429. The <code>type</code> is this page's address with the code as its fragment. The client raises a typed error for each status (see <a href="/developers#client">Getting started</a>).</p>
<p>Reporting a problem: quote the <code>request_id</code> (also in the <code>Request-Id</code> response header).</p>
${rows}`,
  );
}

const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>wsops API reference</title><link rel="icon" href="data:,"></head>
<body>
<div id="app"></div>
<script src="/developers/assets/scalar-standalone.js"></script>
<script src="/developers/assets/reference.js"></script>
</body>
</html>
`;

// No fonts from a CDN, no proxy, no telemetry: everything comes from this server.
const REFERENCE_INIT = `Scalar.createApiReference('#app', {
  url: '/developers/openapi.json',
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
});
`;

/** Read at the first request for it: a large file that most processes never serve. */
function scalar(): Buffer {
  return readFileSync(vendorFile('scalar-standalone.js'));
}

export function registerPortalRoutes(app: FastifyInstance, services: PortalRoutesServices): void {
  const send = (reply: FastifyReply, type: string, body: string | Buffer, cache = 'no-cache') =>
    reply.header('content-security-policy', PORTAL_CSP).header('cache-control', cache).type(type).send(body);
  const started = gettingStartedPage(services.config.baseUrl);
  const events = eventsPage();
  const errors = errorsPage();
  app.get(ERRORS_PAGE_PATH, async (_req, reply) => send(reply, 'text/html; charset=utf-8', errors));
  app.get('/developers', async (_req, reply) => send(reply, 'text/html; charset=utf-8', started));
  app.get('/developers/events', async (_req, reply) => send(reply, 'text/html; charset=utf-8', events));
  app.get('/developers/reference', async (_req, reply) => send(reply, 'text/html; charset=utf-8', REFERENCE_PAGE));
  app.get('/developers/assets/portal.css', async (_req, reply) => send(reply, 'text/css; charset=utf-8', STYLE));
  app.get('/developers/assets/reference.js', async (_req, reply) => send(reply, 'text/javascript; charset=utf-8', REFERENCE_INIT));
  // Compressed once per coding (at the large-document levels of compression.ts), with an ETag per representation.
  serveStaticDocument(app, {
    path: '/developers/assets/scalar-standalone.js',
    contentType: 'text/javascript; charset=utf-8',
    body: scalar,
    cacheControl: 'public, max-age=3600',
    headers: { 'content-security-policy': PORTAL_CSP },
  });
}
