/**
 * Webhook endpoints in the console: the list, the register form, and one endpoint's page with
 * its actions and chart. Every rule is the domain's (createEndpoint, url-safety.ts,
 * checkSubscription, the state machine in endpoints.ts); the page only shows and submits.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { alertsSection } from '../../alerts/endpoint-alerts-section.js';
import { listEndpointAlerts } from '../../alerts/stages.js';
import type { ConsoleServices, NavEntry } from '../../console-kit/context.js';
import { type PageContext, pageContext } from '../../console-kit/context.js';
import { type FieldErrors, formError, formValue, formValues, textField } from '../../console-kit/forms.js';
import { type Html, html, jsonScript } from '../../console-kit/html.js';
import { type BadgeTone, badge, csrfField, formatTime, layout, scrollingTable, sendHtml } from '../../console-kit/layout.js';
import { AppError } from '../../errors.js';
import { READ_SCOPES } from '../../registers/define.js';
import { recentEventsFor, setEndpointFilter, tryFilter } from '../../webhooks/endpoints/endpoint-filters.js';
import {
  createEndpoint,
  DEFAULT_ROTATION_GRACE_HOURS,
  disableEndpoint,
  type EndpointView,
  enableEndpoint,
  listEndpoints,
  MAX_DELIVERING_ENDPOINTS,
  rotateSecret,
  setStandardWebhooks,
  verifyEndpoint,
} from '../../webhooks/endpoints/endpoints.js';
import { EVENT_TYPES, SUBSCRIBABLE_EVENTS } from '../../webhooks/events/event-types.js';
import { endpointBacklog } from '../../webhooks/queue/backlog.js';
import { deliveryStats, heldCount, type StatsBucket, type StatsWindow, sendTestEvent } from '../../webhooks/queue/deliveries.js';
import { FAILURES_BEFORE_DISABLE } from '../../webhooks/queue/schedule.js';
import { parseThrottle, setThrottle } from '../../webhooks/queue/throttle.js';
import { backlogSection } from './endpoint-backlog.js';
import { type FilterFormState, filterField, filterSection } from './endpoint-filter.js';
import { parseSignatureChoice, signaturesSection } from './endpoint-signatures.js';

/** This page's entry in the console's main navigation. */
export const WEBHOOKS_NAV: NavEntry = { key: 'webhooks', label: 'Webhooks', href: '/console/webhooks' };

type IdParams = { Params: { id: string } };

/** A timestamp in UTC to the second (delivery attempts are seconds apart). */
export const when = (iso: string | null): Html => formatTime(iso, '—', 'second');

/** An endpoint's state in words, with the reason when disabled. */
export function endpointState(e: Pick<EndpointView, 'status' | 'disabled_reason'>): { text: string; badge: BadgeTone } {
  if (e.status === 'active') return { text: 'Active', badge: 'good' };
  if (e.status === 'unverified') return { text: 'Awaiting verification', badge: 'warn' };
  if (e.disabled_reason === 'failures') return { text: 'Disabled after repeated failures', badge: 'bad' };
  return { text: 'Disabled by an admin', badge: 'neutral' };
}

export function stateBadge(e: Pick<EndpointView, 'status' | 'disabled_reason'>): Html {
  const state = endpointState(e);
  return badge(state.badge, state.text);
}

export function disabledReason(e: EndpointView): string {
  if (e.status !== 'disabled') return '';
  if (e.disabled_reason === 'failures') return `Disabled after ${FAILURES_BEFORE_DISABLE} failed deliveries in a row.`;
  return 'Disabled by a person (in the console or with the CLI).';
}

/** What happens to a disabled endpoint's events, by its reason (store/event-receivers.ts). */
function heldWords(e: EndpointView): string {
  if (e.disabled_reason === 'failures')
    return 'they include the events it subscribes to raised since it was disabled, and are sent, each once, when it is switched on and verified (held deliveries older than the delivery retention are pruned).';
  return 'those it owed when it was disabled; they resume when it is switched on and verified. Events raised while it is off are not sent to it (the events API lists them).';
}

function verification(e: EndpointView): Html {
  if (e.verified_at) return html`Verified ${when(e.verified_at)}`;
  return html`Not verified yet: it must answer the signed <code>endpoint.verification</code> with a 2xx; events before that are not delivered to it.
  Your receiver may answer the verification before it has the secret (the challenge is in the body); if it answered with an error, use Resend verification: it is sent again now.`;
}

/** Loads one endpoint of the admin's workspace; another workspace's id is simply not found. */
export async function endpointOf(ctx: PageContext, id: string): Promise<EndpointView | undefined> {
  const all = await listEndpoints(ctx.services, ctx.admin.workspaceId);
  return all.find((e) => e.id === id);
}

export function notFound(ctx: PageContext, reply: FastifyReply, what = 'webhook endpoint'): FastifyReply {
  return sendHtml(
    reply,
    layout(ctx, {
      title: 'Not found',
      nav: 'webhooks',
      body: html`<p>There is no such ${what} in ${ctx.admin.workspaceName}.</p><p><a href="/console/webhooks">Back to webhooks</a></p>`,
    }),
    404,
  );
}

function scopeDescription(scope: string): string {
  const register = scope.replace(/:read$/, '');
  const events = SUBSCRIBABLE_EVENTS.filter((e) => EVENT_TYPES[e].scope === scope);
  return `Read the ${register} module${events.length ? `; needed for ${events.join(', ')}` : ''}.`;
}

interface RegisterValues {
  url: string;
  scopes: string[];
  events: string[];
  standardWebhooks: boolean;
  /** Broker destinations (ADR 52): blank unless the URL is amqps:// or tls://. */
  exchange?: string;
  routingKey?: string;
  subject?: string;
  filter: string;
}

/** The broker destination fields: the exchange and routing key (RabbitMQ), the subject (NATS). */
function destinationFields(values: RegisterValues, errors: FieldErrors): Html {
  return html`<fieldset class="field" id="f-destination">
    <legend>Broker destination <span class="hint">(only for an amqps:// or tls:// URL)</span></legend>
    <p class="hint">Placeholders: <code>{type}</code> (the event type), <code>{workspace}</code>, <code>{endpoint}</code>. See the destinations guide.</p>
    ${textField({ name: 'exchange', label: 'RabbitMQ exchange (required for amqps://)', value: values.exchange ?? '', errors })}
    ${textField({ name: 'routing_key', label: 'RabbitMQ routing key', value: values.routingKey ?? '', errors, hint: 'Default {type}.' })}
    ${textField({ name: 'subject', label: 'NATS subject', value: values.subject ?? '', errors, hint: 'Default wsops.{workspace}.{type}; a JetStream stream must listen on it.' })}
  </fieldset>`;
}

function registerForm(ctx: PageContext, values: RegisterValues, errors: FieldErrors = {}): Html {
  const allowPrivate = ctx.services.config.allowPrivateWebhooks;
  const scopeError = errors.scopes;
  const eventError = errors.events;
  return html`<form method="post" action="/console/webhooks/new" class="stack" novalidate data-webhook-form data-allow-private="${allowPrivate ? 'true' : 'false'}">
  ${csrfField(ctx)}
  ${formError(errors)}
  ${textField({
    name: 'url',
    label: 'Endpoint URL',
    type: 'url',
    value: values.url,
    required: true,
    errors,
    hint: allowPrivate
      ? 'Development mode: http, any port and private addresses are allowed.'
      : 'An https URL on port 443 whose host is reachable from the public internet. To test with a receiver on this machine, the server needs WSOPS_ALLOW_PRIVATE_WEBHOOKS=true (test and development only).',
  })}
  <p class="hint">Or a broker destination: <code>amqps://USER:PASSWORD@HOST:PORT/VHOST</code> (RabbitMQ; the password is kept encrypted and never shown again) or <code>tls://HOST:PORT</code> (NATS JetStream).</p>
  <p class="error live-error" id="f-url-live" aria-live="polite" hidden></p>
  <fieldset class="field${scopeError ? ' has-error' : ''}" id="f-scopes"${scopeError ? html` aria-describedby="f-scopes-error"` : ''}>
    <legend>Scopes</legend>
    <p class="hint">Read scopes only. Each event needs the scope of its module.</p>
    ${READ_SCOPES.map(
      (s) => html`<label class="check"><input type="checkbox" name="scopes" value="${s}"${values.scopes.includes(s) ? html` checked` : ''}>
      <span><code>${s}</code> <span class="hint">${scopeDescription(s)}</span></span></label>`,
    )}
    ${scopeError ? html`<p class="error" id="f-scopes-error">${scopeError}</p>` : ''}
  </fieldset>
  <fieldset class="field${eventError ? ' has-error' : ''}" id="f-events"${eventError ? html` aria-describedby="f-events-error"` : ''}>
    <legend>Event types</legend>
    ${SUBSCRIBABLE_EVENTS.map(
      (
        e,
      ) => html`<label class="check"><input type="checkbox" name="events" value="${e}" data-scope="${EVENT_TYPES[e].scope}"${values.events.includes(e) ? html` checked` : ''}>
      <span><code>${e}</code> <span class="hint">${EVENT_TYPES[e].description} Needs <code>${EVENT_TYPES[e].scope}</code>.</span></span></label>`,
    )}
    <p class="error live-error" id="f-events-live" aria-live="polite" hidden></p>
    ${eventError ? html`<p class="error" id="f-events-error">${eventError}</p>` : ''}
  </fieldset>
  ${destinationFields(values, errors)}
  <label class="check"><input type="checkbox" name="standard_webhooks" value="on"${values.standardWebhooks ? html` checked` : ''}>
  <span>Also send the Standard Webhooks headers <span class="hint"><code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code> beside <code>X-Service-Signature</code>, for receivers that verify with a <code>standardwebhooks</code> library.</span></span></label>
  ${filterField(values.filter, errors)}
  <p><button type="submit" class="primary">Register endpoint</button> <a href="/console/webhooks">Cancel</a></p>
</form>`;
}

/** The secret page, after registration or rotation: shown once, never cached. */
function secretPanel(secret: string, lead: string): Html {
  return html`<div class="secret-once" role="region" aria-label="Signing secret">
  <p>${lead}</p>
  <p class="warning"><strong>Copy it now: it is shown only once.</strong> It signs every delivery (<code>X-Service-Signature</code>, and <code>webhook-signature</code> when the Standard Webhooks headers are on: pass it as it is to a <code>standardwebhooks</code> library); keep it in your receiver's secret store.</p>
  <div class="copy-row"><input type="text" readonly id="secret-value" value="${secret}" aria-label="Signing secret">
  <button type="button" class="copy" data-copy="#secret-value">Copy</button></div>
</div>`;
}

const NOTICES: Record<string, { kind: 'success' | 'error' | 'info'; text: string }> = {
  disabled: {
    kind: 'success',
    text: 'Endpoint disabled. Deliveries it already owed are held until it is switched on; events raised while it is off are not sent to it (the events API lists them).',
  },
  enabled: { kind: 'success', text: 'Endpoint switched on: the verification is sent again. It becomes active when it answers with a 2xx.' },
  verification_sent: { kind: 'success', text: 'The verification is being sent again now.' },
  test_sent: { kind: 'success', text: 'Test event queued: a signed endpoint.test delivery. It shows in the deliveries in a few seconds.' },
  test_waiting: { kind: 'info', text: 'Test event queued; it is delivered once the endpoint answers its verification.' },
  throttle_set: { kind: 'success', text: 'Throttle saved: every worker applies it from its next claim.' },
  signatures_set: { kind: 'success', text: 'Signature headers saved: they apply from the next delivery attempt.' },
  filter_set: { kind: 'success', text: 'Content filter saved: it applies from the next event raised.' },
};

/**
 * The periods of the chart as a table, each run of periods without an attempt collapsed into one
 * row: 24 rows of mostly zeros said less than the few that had deliveries.
 */
function statsTable(buckets: readonly StatsBucket[]): Html {
  const pct = (r: number | null) => (r === null ? '—' : `${Math.round(r * 1000) / 10}%`);
  const ms = (v: number | null) => (v === null ? '—' : `${v} ms`);
  if (buckets.every((b) => b.attempts === 0)) return html`<p class="muted">No delivery attempts in this period.</p>`;
  const rows: Html[] = [];
  for (let i = 0; i < buckets.length; ) {
    const b = buckets[i] as StatsBucket;
    if (b.attempts > 0) {
      rows.push(
        html`<tr><td>${when(b.start)}</td><td>${b.attempts}</td><td>${b.succeeded}</td><td>${b.failed}</td><td>${pct(b.success_rate)}</td><td>${ms(b.p50_latency_ms)}</td><td>${ms(b.avg_latency_ms)}</td></tr>`,
      );
      i++;
      continue;
    }
    let j = i;
    while (j + 1 < buckets.length && (buckets[j + 1] as StatsBucket).attempts === 0) j++;
    const last = buckets[j] as StatsBucket;
    rows.push(
      html`<tr class="empty-run"><td>${j === i ? when(b.start) : html`${when(b.start)} to ${when(last.start)}`}</td><td colspan="6" class="muted">No attempts${j === i ? '' : html` (${j - i + 1} periods)`}</td></tr>`,
    );
    i = j + 1;
  }
  return scrollingTable(
    'Delivery statistics',
    html`<table class="delivery-stats">
  <caption class="visually-hidden">Delivery attempts per period; periods without attempts are grouped</caption>
  <thead><tr><th scope="col">From</th><th scope="col">Attempts</th><th scope="col">Succeeded</th><th scope="col">Failed</th><th scope="col">Success rate</th><th scope="col">Median latency</th><th scope="col">Mean latency</th></tr></thead>
  <tbody>${rows}</tbody></table>`,
  );
}

async function endpointPage(
  ctx: PageContext,
  e: EndpointView,
  window: StatsWindow,
  extra?: { notice?: (typeof NOTICES)[string]; secret?: Html; filter?: FilterFormState },
) {
  const services = ctx.services;
  const held = e.status === 'disabled' ? await heldCount(services, ctx.admin.workspaceId, e.id) : 0;
  const stats = await deliveryStats(services, ctx.admin.workspaceId, e.id, window);
  const backlog = await endpointBacklog(services.database, e.id, services.clock());
  const alerts = await listEndpointAlerts(services.database.db, ctx.admin.workspaceId, e.id);
  const recent = await recentEventsFor(services, ctx.admin.workspaceId, e);
  const base = `/console/webhooks/${encodeURIComponent(e.id)}`;
  const action = (path: string, label: string, opts: { confirm?: string; primary?: boolean; fields?: Html } = {}) =>
    html`<form method="post" action="${base}/${path}" class="inline-form"${opts.confirm ? html` data-confirm="${opts.confirm}"` : ''}>
    ${csrfField(ctx)}${opts.fields ?? ''}<button type="submit"${opts.primary ? html` class="primary"` : ''}>${label}</button></form>`;
  const actions: Html[] = [];
  if (e.status === 'unverified') actions.push(action('verify', 'Resend verification'));
  if (e.status !== 'disabled') actions.push(action('test', 'Send test event'));
  if (e.status === 'disabled') actions.push(action('enable', 'Switch on', { primary: true }));
  else
    actions.push(
      action('disable', 'Disable', {
        confirm:
          'Disable this endpoint? Deliveries stop at once: those it already owes are held until it is switched on; events raised while it is off are not sent to it.',
      }),
    );
  const windowLink = (w: StatsWindow, label: string) =>
    w === window ? html`<strong aria-current="true">${label}</strong>` : html`<a href="${base}?window=${w}">${label}</a>`;
  return layout(ctx, {
    title: 'Webhook endpoint',
    nav: 'webhooks',
    notice: extra?.notice,
    body: html`${extra?.secret ?? ''}
<p class="url-line"><code class="url">${e.url}</code></p>
<dl class="facts">
  <dt>State</dt><dd>${stateBadge(e)} ${disabledReason(e)}</dd>
  <dt>Verification</dt><dd>${verification(e)}</dd>
  <dt>Failed deliveries in a row</dt><dd>${e.consecutive_failures} (disabled at ${FAILURES_BEFORE_DISABLE})${e.last_failure ? html`<br><span class="muted">Last failure: ${e.last_failure}</span>` : ''}</dd>
  ${e.status === 'disabled' ? html`<dt>Held deliveries</dt><dd>${held} held; ${heldWords(e)}</dd>` : ''}
  <dt>Scopes</dt><dd>${e.scopes.map((s) => html`<code>${s}</code> `)}</dd>
  <dt>Events</dt><dd>${e.events.map((s) => html`<code>${s}</code> `)}</dd>
  <dt>Registered</dt><dd>${when(e.created_at)}</dd>
  ${destinationFacts(e)}
  <dt>Signature headers</dt><dd data-signatures>${e.standard_webhooks ? html`<code>X-Service-Signature</code> and Standard Webhooks` : html`<code>X-Service-Signature</code> only`}</dd>
  ${e.previous_secret_expires_at ? html`<dt>Previous secret</dt><dd>Still signs beside the new one until ${when(e.previous_secret_expires_at)}</dd>` : ''}
</dl>
<div class="actions">${actions}</div>
<p><a href="${base}/deliveries">See deliveries</a></p>
${backlogSection(ctx, e, backlog)}
${alertsSection(alerts, services.config.alertFailingAfterMinutes)}
${signaturesSection(ctx, e)}
${filterSection(ctx, e, recent, extra?.filter)}
<section aria-labelledby="rotate-h">
  <h2 id="rotate-h">Rotate the signing secret</h2>
  <p>The new secret signs at once; the old one keeps signing beside it for the grace period, so you can update your receiver without missing a delivery.</p>
  ${action('rotate', 'Rotate secret', {
    confirm: 'Rotate the signing secret? The new secret is shown once.',
    fields: textField({
      name: 'grace_hours',
      label: 'Grace period (hours, 0 to 168)',
      type: 'number',
      value: String(DEFAULT_ROTATION_GRACE_HOURS),
    }),
  })}
</section>
<section aria-labelledby="chart-h">
  <h2 id="chart-h">Deliveries, ${window === '24h' ? 'last 24 hours' : 'last 7 days'}</h2>
  <p>${windowLink('24h', 'Last 24 hours')} · ${windowLink('7d', 'Last 7 days')}</p>
  <link rel="stylesheet" href="/console/assets/uPlot.min.css">
  <script src="/console/assets/uPlot.iife.min.js" defer></script>
  <div id="delivery-chart" class="chart" aria-hidden="true"></div>
  ${jsonScript('delivery-stats', stats)}
  ${statsTable(stats.buckets)}
</section>`,
  });
}

function parseWindow(raw: unknown): StatsWindow {
  return raw === '7d' ? '7d' : '24h';
}

export function registerWebhookPages(scope: FastifyInstance, services: ConsoleServices): void {
  scope.get('/webhooks', async (request, reply) => {
    const ctx = pageContext(services, request);
    const all = await listEndpoints(services, ctx.admin.workspaceId);
    const delivering = all.filter((e) => e.status !== 'disabled').length;
    const body = all.length
      ? html`<p>${delivering} of ${MAX_DELIVERING_ENDPOINTS} endpoints delivering (active or awaiting verification).
  ${delivering < MAX_DELIVERING_ENDPOINTS ? html`<a class="button primary" href="/console/webhooks/new">Register an endpoint</a>` : html`<span class="muted">Disable one to register another.</span>`}</p>
${scrollingTable(
  'Endpoints',
  html`<table>
  <thead><tr><th scope="col">URL</th><th scope="col">State</th><th scope="col">Verification</th><th scope="col">Failures in a row</th><th scope="col">Events</th></tr></thead>
  <tbody>${all.map(
    (e) => html`<tr>
    <td><a href="/console/webhooks/${encodeURIComponent(e.id)}"><code class="url">${e.url}</code></a></td>
    <td>${stateBadge(e)}${e.status === 'disabled' ? html`<br><span class="muted">${disabledReason(e)}</span>` : ''}</td>
    <td>${e.verified_at ? html`Verified ${when(e.verified_at)}` : 'Not verified'}</td>
    <td>${e.consecutive_failures}</td>
    <td>${e.events.join(', ')}</td></tr>`,
  )}</tbody></table>`,
)}`
      : html`<div class="empty"><p>No webhook endpoints yet. Register one to receive signed events (an asset assigned, a purchase request decided, …) at your own URL.</p>
  <p><a class="button primary" href="/console/webhooks/new">Register an endpoint</a></p></div>`;
    const alerts = html`<p><a href="/console/webhooks/alerts">Failure alerts</a>: who they are mailed to, and a test alert.</p>`;
    return sendHtml(reply, layout(ctx, { title: 'Webhooks', nav: 'webhooks', body: html`${body}${alerts}` }));
  });

  scope.get('/webhooks/new', async (request, reply) => {
    const ctx = pageContext(services, request);
    return sendHtml(
      reply,
      layout(ctx, {
        title: 'Register a webhook endpoint',
        nav: 'webhooks',
        body: registerForm(ctx, { url: '', scopes: [], events: [], standardWebhooks: false, filter: '' }),
      }),
    );
  });

  scope.post('/webhooks/new', async (request, reply) => {
    const ctx = pageContext(services, request);
    const values = {
      url: formValue(request.body, 'url'),
      scopes: formValues(request.body, 'scopes'),
      events: formValues(request.body, 'events'),
      standardWebhooks: formValue(request.body, 'standard_webhooks') !== '',
      exchange: formValue(request.body, 'exchange'),
      routingKey: formValue(request.body, 'routing_key'),
      subject: formValue(request.body, 'subject'),
      filter: formValue(request.body, 'filter'),
    };
    try {
      const box = formValue(request.body, 'standard_webhooks');
      if (box !== '' && box !== 'on')
        throw new AppError('invalid_parameter', 'the Standard Webhooks box is either ticked ("on") or left out', { param: '_form' });
      const created = await createEndpoint(services, ctx.admin.workspaceId, { ...values, actor: ctx.actor });
      return sendHtml(
        reply,
        layout(ctx, {
          title: 'Endpoint registered',
          nav: 'webhooks',
          notice: {
            kind: 'success',
            text: 'Endpoint registered. A signed verification was sent; it becomes active when it answers with a 2xx.',
          },
          body: html`${secretPanel(created.secret, `Signing secret of ${created.url}:`)}
<p><a class="button" href="/console/webhooks/${encodeURIComponent(created.id)}">Go to the endpoint</a></p>`,
        }),
      );
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const param =
        typeof err.extra.param === 'string' &&
        ['url', 'scopes', 'events', 'filter', 'exchange', 'routing_key', 'subject'].includes(err.extra.param)
          ? err.extra.param
          : '_form';
      // A broker password typed into the URL is not sent back in the page: it is typed again.
      const kept = { ...values, url: withoutPassword(values.url) };
      return sendHtml(
        reply,
        layout(ctx, { title: 'Register a webhook endpoint', nav: 'webhooks', body: registerForm(ctx, kept, { [param]: err.message }) }),
        err.code === 'limit_reached' ? 409 : 400,
      );
    }
  });

  scope.get<IdParams & { Querystring: { window?: string; notice?: string } }>('/webhooks/:id', async (request, reply) => {
    const ctx = pageContext(services, request);
    const e = await endpointOf(ctx, request.params.id);
    if (!e) return notFound(ctx, reply);
    const notice = request.query.notice ? NOTICES[request.query.notice] : undefined;
    return sendHtml(reply, await endpointPage(ctx, e, parseWindow(request.query.window), { notice }));
  });

  /** Runs an action on an endpoint of the admin's workspace; a refusal is shown on its page. */
  const act = (
    path: string,
    run: (ctx: PageContext, id: string, request: FastifyRequest) => Promise<string | { secret: Html; notice: (typeof NOTICES)[string] }>,
  ) =>
    scope.post<IdParams>(`/webhooks/:id/${path}`, async (request, reply) => {
      const ctx = pageContext(services, request);
      const e = await endpointOf(ctx, request.params.id);
      if (!e) return notFound(ctx, reply);
      try {
        const result = await run(ctx, e.id, request);
        if (typeof result === 'string') return reply.redirect(`/console/webhooks/${encodeURIComponent(e.id)}?notice=${result}`, 303);
        const fresh = (await endpointOf(ctx, e.id)) ?? e;
        return sendHtml(reply, await endpointPage(ctx, fresh, '24h', result));
      } catch (err) {
        if (!(err instanceof AppError) || err.code === 'not_found') throw err;
        return sendHtml(reply, await endpointPage(ctx, e, '24h', { notice: { kind: 'error', text: err.message } }), err.status);
      }
    });

  act('disable', async (ctx, id) => {
    await disableEndpoint(services, ctx.admin.workspaceId, id, ctx.actor);
    return 'disabled';
  });
  act('enable', async (ctx, id) => {
    await enableEndpoint(services, ctx.admin.workspaceId, id, ctx.actor);
    return 'enabled';
  });
  act('verify', async (ctx, id) => {
    await verifyEndpoint(services, ctx.admin.workspaceId, id, ctx.actor);
    return 'verification_sent';
  });
  act('test', async (ctx, id) => {
    const sent = await sendTestEvent(services, ctx.admin.workspaceId, id, ctx.actor);
    return sent.endpoint_status === 'unverified' ? 'test_waiting' : 'test_sent';
  });
  act('throttle', async (ctx, id, request) => {
    const rate = parseThrottle(formValue(request.body, 'max_per_second'));
    await setThrottle(services, ctx.admin.workspaceId, id, rate, ctx.actor);
    return 'throttle_set';
  });
  act('signatures', async (ctx, id, request) => {
    const standard = parseSignatureChoice(formValue(request.body, 'signatures'));
    await setStandardWebhooks(services, ctx.admin.workspaceId, id, standard, ctx.actor);
    return 'signatures_set';
  });
  registerFilterActions(scope, services);
  act('rotate', async (ctx, id, request) => {
    const raw = formValue(request.body, 'grace_hours').trim();
    const hours = raw === '' ? DEFAULT_ROTATION_GRACE_HOURS : Number(raw);
    const rotated = await rotateSecret(services, ctx.admin.workspaceId, id, hours, ctx.actor);
    return {
      secret: secretPanel(rotated.secret, 'New signing secret:'),
      notice: {
        kind: 'success',
        text: hours > 0 ? `Secret rotated. The previous secret keeps signing beside it for ${hours} hours.` : 'Secret rotated.',
      },
    };
  });
}

/** What a broker destination publishes to (the URL line above shows no password). */
function destinationFacts(e: EndpointView): Html {
  if (e.kind === 'rabbitmq')
    return html`<dt>Destination</dt><dd>RabbitMQ: exchange <code>${e.exchange ?? ''}</code>, routing key <code>${e.routing_key ?? ''}</code></dd>`;
  if (e.kind === 'nats') return html`<dt>Destination</dt><dd>NATS JetStream: subject <code>${e.subject ?? ''}</code></dd>`;
  return html``;
}

function withoutPassword(typed: string): string {
  try {
    const url = new URL(typed);
    if (url.password === '') return typed;
    url.password = '';
    return url.href;
  } catch {
    return typed;
  }
}

/**
 * The filter block's two buttons: save (a refusal is shown beside the field, the text kept) and
 * test (the text as typed, saved or not, against the chosen event; nothing is stored).
 */
function registerFilterActions(scope: FastifyInstance, services: ConsoleServices): void {
  const handle = (path: string, run: (ctx: PageContext, e: EndpointView, state: FilterFormState) => Promise<FilterFormState | undefined>) =>
    scope.post<IdParams>(`/webhooks/:id/${path}`, async (request, reply) => {
      const ctx = pageContext(services, request);
      const e = await endpointOf(ctx, request.params.id);
      if (!e) return notFound(ctx, reply);
      const state: FilterFormState = { draft: formValue(request.body, 'filter'), eventId: formValue(request.body, 'event_id') };
      try {
        const shown = await run(ctx, e, state);
        if (!shown) return reply.redirect(`/console/webhooks/${encodeURIComponent(e.id)}?notice=filter_set#filter`, 303);
        return sendHtml(reply, await endpointPage(ctx, e, '24h', { filter: shown }));
      } catch (err) {
        if (!(err instanceof AppError) || err.code === 'not_found') throw err;
        const param = err.extra.param === 'event_id' ? 'event_id' : 'filter';
        return sendHtml(reply, await endpointPage(ctx, e, '24h', { filter: { ...state, errors: { [param]: err.message } } }), err.status);
      }
    });
  handle('filter', async (ctx, e, state) => {
    await setEndpointFilter(services, ctx.admin.workspaceId, e.id, state.draft, ctx.actor);
    return undefined;
  });
  handle('filter/test', async (ctx, e, state) => ({
    ...state,
    trial: await tryFilter(services, ctx.admin.workspaceId, e, state.eventId ?? '', state.draft),
  }));
}
