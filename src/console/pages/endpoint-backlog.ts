/**
 * The endpoint page's backlog block and throttle form (ADR 33): what is due now and how long
 * the oldest due delivery has waited, what is in flight or waiting for a retry, and the
 * per-endpoint throttle. The numbers are src/webhooks/queue/backlog.ts's, the rule throttle.ts's.
 */

import type { PageContext } from '../../console-kit/context.js';
import { textField } from '../../console-kit/forms.js';
import { type Html, html } from '../../console-kit/html.js';
import { csrfField, formatTime } from '../../console-kit/layout.js';
import type { EndpointView } from '../../webhooks/endpoints/endpoints.js';
import type { EndpointBacklog } from '../../webhooks/queue/backlog.js';
import { MAX_THROTTLE_PER_SECOND } from '../../webhooks/queue/throttle.js';

/** "4 s", "3 min 20 s", "2 h 5 min": how long the oldest due delivery has waited. */
export function waited(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

export function backlogSection(ctx: PageContext, e: EndpointView, backlog: EndpointBacklog): Html {
  const base = `/console/webhooks/${encodeURIComponent(e.id)}`;
  return html`<section aria-labelledby="backlog-h" id="backlog">
  <h2 id="backlog-h">Backlog</h2>
  <dl class="facts">
    <dt>Due now</dt><dd data-backlog="due">${backlog.due}${
      backlog.due > 0
        ? html`; the oldest has waited <strong data-backlog="age">${waited(backlog.oldest_due_age_seconds)}</strong> (due since ${formatTime(backlog.oldest_due_at, '—', 'second')})`
        : html` <span class="muted">(nothing waiting)</span>`
    }</dd>
    <dt>Being delivered</dt><dd data-backlog="in-flight">${backlog.in_flight}</dd>
    <dt>Waiting for a retry</dt><dd data-backlog="retrying">${backlog.retrying}</dd>
    <dt>Throttle</dt><dd data-backlog="throttle">${
      e.max_per_second === null
        ? 'None: deliveries are sent as fast as the endpoint answers.'
        : `At most ${e.max_per_second} deliveries per second; the rest wait in the queue (never dropped, never counted as failures).`
    }</dd>
  </dl>
  <form method="post" action="${base}/throttle" class="inline-form">${csrfField(ctx)}
  ${textField({
    name: 'max_per_second',
    label: 'Deliveries per second at most',
    type: 'number',
    value: e.max_per_second === null ? '' : String(e.max_per_second),
    hint: `For a receiver that cannot take bursts: a whole number from 1 to ${MAX_THROTTLE_PER_SECOND.toLocaleString('en')}; leave empty for no throttle.`,
    attrs: html`min="1" max="${MAX_THROTTLE_PER_SECOND}" step="1"`,
  })}
  <button type="submit">Save throttle</button></form>
</section>`;
}
