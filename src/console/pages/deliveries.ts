/**
 * One endpoint's deliveries in the console: each event with its attempts, filtered by outcome
 * and event type (a GET form), paged by keyset ("Older"), "Resend now" per delivery and
 * "Recover failed deliveries since …". The rules and queries are src/webhooks/queue/deliveries.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { ConsoleServices } from '../../console-kit/context.js';
import { type PageContext, pageContext } from '../../console-kit/context.js';
import { type FieldErrors, formValue, textField } from '../../console-kit/forms.js';
import { type Html, html } from '../../console-kit/html.js';
import { type BadgeTone, badge, csrfField, layout, scrollingTable, sendHtml } from '../../console-kit/layout.js';
import { AppError } from '../../errors.js';
import { errorClassHelp } from '../../webhooks/destinations/error-classes.js';
import type { EndpointView } from '../../webhooks/endpoints/endpoints.js';
import {
  DELIVERY_EVENT_TYPES,
  DELIVERY_OUTCOMES,
  type DeliveryEventView,
  type DeliveryPage,
  listDeliveries,
  recoverFailed,
  resendDelivery,
} from '../../webhooks/queue/deliveries.js';
import { endpointOf, notFound, stateBadge, when } from './webhooks.js';

interface Filters {
  outcome: string;
  event_type: string;
  before: string;
}

const STATE_WORDS: Record<DeliveryEventView['state'], string> = {
  succeeded: 'Succeeded',
  exhausted: 'Failed',
  pending: 'Pending',
  held: 'Held',
};
const STATE_TONE: Record<DeliveryEventView['state'], BadgeTone> = { succeeded: 'good', exhausted: 'bad', pending: 'warn', held: 'neutral' };

function filterForm(base: string, f: Filters, errors: FieldErrors): Html {
  const select = (name: 'outcome' | 'event_type', label: string, options: readonly (readonly [string, string])[]) => {
    const error = errors[name];
    return html`<div class="field${error ? ' has-error' : ''}"><label for="f-${name}">${label}</label>
    <select id="f-${name}" name="${name}"${error ? html` aria-invalid="true" aria-describedby="f-${name}-error"` : ''}>
      <option value="">Any</option>
      ${options.map(([v, l]) => html`<option value="${v}"${v === f[name] ? html` selected` : ''}>${l}</option>`)}
    </select>${error ? html`<p class="error" id="f-${name}-error">${error}</p>` : ''}</div>`;
  };
  return html`<form method="get" action="${base}" class="filters" role="search" aria-label="Filter deliveries">
  ${select(
    'outcome',
    'Outcome',
    Object.entries(DELIVERY_OUTCOMES).map(([k, v]) => [k, v.label] as const),
  )}
  ${select(
    'event_type',
    'Event type',
    DELIVERY_EVENT_TYPES.map((t) => [t, t] as const),
  )}
  <button type="submit">Filter</button> <a href="${base}">Clear</a>
</form>`;
}

/** The class, and for url_refused what it means and the setting that lifts the rules (the others speak for themselves). */
function errorCell(errorClass: string): Html {
  return errorClass === 'url_refused'
    ? html`${errorClass}<br><span class="muted">${errorClassHelp(errorClass)}</span>`
    : html`<span title="${errorClassHelp(errorClass) ?? ''}">${errorClass}</span>`;
}

function deliveryRow(ctx: PageContext, base: string, d: DeliveryEventView, canResend: boolean): Html {
  const latest = d.attempts[0];
  return html`<article class="delivery" aria-labelledby="d-${d.job_id}">
  <header><h3 id="d-${d.job_id}"><code>${d.event_type}</code> ${badge(STATE_TONE[d.state], STATE_WORDS[d.state])}</h3>
  <p class="muted">Event <code>${d.event_id}</code>, ${when(d.created_at)}${d.next_attempt_at ? html`; next attempt ${when(d.next_attempt_at)}` : ''}</p>
  ${
    canResend
      ? html`<form method="post" action="${base}/${encodeURIComponent(latest?.delivery_id ?? d.job_id)}/resend" class="inline-form">${csrfField(ctx)}<button type="submit">Resend now</button></form>`
      : ''
  }</header>
  ${
    d.attempts.length
      ? scrollingTable(
          'Attempts',
          html`<table>
    <thead><tr><th scope="col">Attempt</th><th scope="col">Time</th><th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Error</th><th scope="col">Response</th><th scope="col">Next retry</th></tr></thead>
    <tbody>${d.attempts.map(
      (a) => html`<tr><td>${a.attempt} <span class="muted">${a.delivery_id}</span></td><td>${when(a.attempted_at)}</td>
      <td>${a.outcome === 'succeeded' ? 'Succeeded' : 'Failed'}${a.status_code === null ? '' : html` (${a.status_code})`}</td>
      <td>${a.latency_ms} ms</td><td>${a.error_class ? errorCell(a.error_class) : '—'}</td>
      <td>${a.response_snippet ? html`<code class="snippet">${a.response_snippet}</code>` : '—'}</td><td>${when(a.next_attempt_at)}</td></tr>`,
    )}</tbody></table>`,
        )
      : html`<p class="muted">No attempt yet.</p>`
  }
</article>`;
}

function page(
  ctx: PageContext,
  e: EndpointView,
  f: Filters,
  result: DeliveryPage | undefined,
  options: { errors?: FieldErrors; notice?: { kind: 'success' | 'error' | 'info'; text: string }; since?: string } = {},
): Html {
  const endpointBase = `/console/webhooks/${encodeURIComponent(e.id)}`;
  const base = `${endpointBase}/deliveries`;
  const errors = options.errors ?? {};
  const filtered = f.outcome || f.event_type;
  const list = result
    ? result.deliveries.length
      ? result.deliveries.map((d) => deliveryRow(ctx, base, d, e.status !== 'disabled'))
      : html`<div class="empty"><p>${
          filtered
            ? 'No delivery matches these filters. Clear them to see every delivery.'
            : e.status === 'active'
              ? 'No deliveries yet. Send a test event from the endpoint page to see one here.'
              : 'No deliveries yet.'
        }</p></div>`
    : '';
  const older = result?.next_before
    ? html`<p><a class="button" rel="next" href="${base}?${new URLSearchParams({ outcome: f.outcome, event_type: f.event_type, before: result.next_before }).toString()}">Older</a></p>`
    : '';
  return layout(ctx, {
    title: 'Deliveries',
    nav: 'webhooks',
    notice: options.notice,
    body: html`<p><a href="${endpointBase}">← <code class="url">${e.url}</code></a> ${stateBadge(e)}</p>
${e.status === 'disabled' ? html`<p class="notice notice-info">This endpoint is disabled: resending and recovering are possible after it is switched on.</p>` : ''}
${filterForm(base, f, errors)}
${f.before ? html`<p><a href="${base}?${new URLSearchParams({ outcome: f.outcome, event_type: f.event_type }).toString()}">Newest deliveries</a></p>` : ''}
${list}
${older}
${
  e.status !== 'disabled'
    ? html`<section aria-labelledby="recover-h"><h2 id="recover-h">Recover failed deliveries</h2>
<p>Every delivery that spent all its attempts, for events since the time you choose, is attempted again now.</p>
<form method="post" action="${endpointBase}/recover" class="stack">${csrfField(ctx)}
${textField({ name: 'since', label: 'Since (UTC)', type: 'datetime-local', value: options.since ?? '', required: true, errors })}
<button type="submit">Recover failed deliveries</button></form></section>`
    : ''
}`,
  });
}

function filtersOf(query: Record<string, unknown>): Filters {
  const s = (k: string) => (typeof query[k] === 'string' ? (query[k] as string) : '');
  return { outcome: s('outcome'), event_type: s('event_type'), before: s('before') };
}

/** A datetime-local value ("2026-11-21T08:00") is read as UTC, as the label says. */
function sinceIso(value: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value) ? `${value}Z` : value;
}

export function registerDeliveryPages(scope: FastifyInstance, services: ConsoleServices): void {
  scope.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>('/webhooks/:id/deliveries', async (request, reply) => {
    const ctx = pageContext(services, request);
    const e = await endpointOf(ctx, request.params.id);
    if (!e) return notFound(ctx, reply);
    const f = filtersOf(request.query);
    const q = request.query;
    const notice =
      q.notice === 'resent'
        ? { kind: 'success' as const, text: 'Delivery resent: a new attempt is made now, with a new delivery id and the same event id.' }
        : q.notice === 'recovered'
          ? { kind: 'success' as const, text: `${Number(q.count) || 0} failed deliveries are attempted again now.` }
          : undefined;
    try {
      const result = await listDeliveries(services, ctx.admin.workspaceId, e.id, {
        outcome: f.outcome || undefined,
        eventType: f.event_type || undefined,
        before: f.before || undefined,
      });
      return sendHtml(reply, page(ctx, e, f, result, { notice }));
    } catch (err) {
      if (!(err instanceof AppError) || err.code === 'not_found') throw err;
      const param = typeof err.extra.param === 'string' ? err.extra.param : '_form';
      const errors = param === 'outcome' || param === 'event_type' ? { [param]: err.message } : {};
      return sendHtml(reply, page(ctx, e, f, undefined, { errors, notice: { kind: 'error', text: err.message } }), 400);
    }
  });

  scope.post<{ Params: { id: string; deliveryId: string } }>('/webhooks/:id/deliveries/:deliveryId/resend', async (request, reply) => {
    const ctx = pageContext(services, request);
    const e = await endpointOf(ctx, request.params.id);
    if (!e) return notFound(ctx, reply);
    const base = `/console/webhooks/${encodeURIComponent(e.id)}/deliveries`;
    try {
      await resendDelivery(services, ctx.admin.workspaceId, e.id, request.params.deliveryId, ctx.actor);
      return reply.redirect(`${base}?notice=resent`, 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.code === 'not_found') return notFound(ctx, reply, 'delivery');
      return sendHtml(
        reply,
        page(ctx, e, { outcome: '', event_type: '', before: '' }, undefined, { notice: { kind: 'error', text: err.message } }),
        err.status,
      );
    }
  });

  scope.post<{ Params: { id: string } }>('/webhooks/:id/recover', async (request, reply) => {
    const ctx = pageContext(services, request);
    const e = await endpointOf(ctx, request.params.id);
    if (!e) return notFound(ctx, reply);
    const since = formValue(request.body, 'since').trim();
    try {
      const result = await recoverFailed(services, ctx.admin.workspaceId, e.id, sinceIso(since), ctx.actor);
      return reply.redirect(`/console/webhooks/${encodeURIComponent(e.id)}/deliveries?notice=recovered&count=${result.recovered}`, 303);
    } catch (err) {
      if (!(err instanceof AppError) || err.code === 'not_found') throw err;
      const errors: FieldErrors = err.extra.param === 'since' ? { since: err.message } : {};
      const result = await listDeliveries(services, ctx.admin.workspaceId, e.id, {});
      return sendHtml(
        reply,
        page(ctx, e, { outcome: '', event_type: '', before: '' }, result, { errors, since, notice: { kind: 'error', text: err.message } }),
        err.status,
      );
    }
  });
}
