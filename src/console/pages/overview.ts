/**
 * The Overview at /console: API requests per key over the last 24 hours or 7 days (a chart
 * drawn by console.js from a JSON block, and a table of totals that needs no script), the
 * health of each webhook endpoint, the plan's limits, and a "Getting started" list while the
 * workspace has no key or no endpoint.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from '#kysely';
import type { ConsoleServices, NavEntry } from '../../console-kit/context.js';
import { type PageContext, pageContext } from '../../console-kit/context.js';
import { type Html, html, jsonScript } from '../../console-kit/html.js';
import { badge, formatTime, layout, scrollingTable, sendHtml } from '../../console-kit/layout.js';
import { EXPIRING_DAYS } from '../../keys/key-terms.js';
import { listKeys } from '../../keys/keys.js';
import { type UsageSeries, usageSeries } from '../../keys/usage.js';
import type { DB } from '../../store/schema.js';
import { type EndpointView, listEndpoints, MAX_DELIVERING_ENDPOINTS } from '../../webhooks/endpoints/endpoints.js';
import { deliveryStats } from '../../webhooks/queue/deliveries.js';
import { endpointState } from './webhooks.js';

/** This page's entry in the console's main navigation. */
export const OVERVIEW_NAV: NavEntry = { key: 'overview', label: 'Overview', href: '/console' };

const HOUR_MS = 3_600_000;

export const RANGES = {
  '24h': { label: 'Last 24 hours', hours: 24, bucket: 'hour' },
  '7d': { label: 'Last 7 days', hours: 24 * 7, bucket: 'hour' },
} as const;
export type Range = keyof typeof RANGES;

/** The last successful delivery of each endpoint: one backward index step per endpoint. */
async function lastSuccess(db: Kysely<DB>, workspaceId: string, endpointId: string): Promise<string | null> {
  const row = await db
    .selectFrom('delivery_attempts')
    .select('attempted_at')
    .where('endpoint_id', '=', endpointId)
    .where('workspace_id', '=', workspaceId)
    .where('outcome', '=', 'succeeded')
    .orderBy('attempted_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.attempted_at ?? null;
}

interface EndpointHealth {
  endpoint: EndpointView;
  lastSuccess: string | null;
  attempts24h: number;
  succeeded24h: number;
}

async function endpointHealth(
  services: ConsoleServices,
  workspaceId: string,
  endpoints: EndpointView[],
  now: number,
): Promise<EndpointHealth[]> {
  return Promise.all(
    endpoints.map(async (endpoint) => {
      const [last, stats] = await Promise.all([
        lastSuccess(services.database.db, workspaceId, endpoint.id),
        deliveryStats(services, workspaceId, endpoint.id, '24h', now),
      ]);
      let attempts = 0;
      let succeeded = 0;
      for (const b of stats.buckets) {
        attempts += b.attempts;
        succeeded += b.succeeded;
      }
      return { endpoint, lastSuccess: last, attempts24h: attempts, succeeded24h: succeeded };
    }),
  );
}

function rangeLinks(range: Range): Html {
  return html`<nav class="range" aria-label="Time range">${Object.entries(RANGES).map(
    ([key, r]) => html`<a href="/console?range=${key}"${key === range ? html` aria-current="page"` : ''}>${r.label}</a> `,
  )}</nav>`;
}

function usageSection(usage: UsageSeries, range: Range): Html {
  const title = html`<h2 id="usage-title">API requests per key</h2>${rangeLinks(range)}`;
  if (usage.total === 0) {
    return html`<section class="card" aria-labelledby="usage-title">${title}
<p class="empty">No API requests in this range. Requests appear here within a minute of being made.</p></section>`;
  }
  const chartData = {
    // uPlot takes x values in seconds.
    x: usage.buckets.map((b) => Date.parse(b) / 1000),
    series: usage.keys.map((k) => ({ label: k.name ? `${k.name} (${k.keyId})` : k.keyId, data: k.requests })),
  };
  const rows = usage.keys.map(
    (
      k,
    ) => html`<tr><th scope="row"><code>${k.keyId}</code>${k.name ? html` ${k.name}` : ''}</th><td class="num">${k.total.toLocaleString('en')}</td>
<td class="num">${Math.round((k.total / usage.total) * 100)}%</td></tr>`,
  );
  return html`<section class="card" aria-labelledby="usage-title">${title}
<link rel="stylesheet" href="/console/assets/uPlot.min.css">
<div id="usage-chart" class="chart" role="img" aria-label="Chart of API requests per key and hour; the table below gives the totals"></div>
${jsonScript('usage-data', chartData)}
${scrollingTable(
  'Requests per key',
  html`<table>
  <caption>Requests per key, ${RANGES[range].label.toLowerCase()} (counts are written once a minute)</caption>
  <thead><tr><th scope="col">Key</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Share</th></tr></thead>
  <tbody>${rows}</tbody>
  <tfoot><tr><th scope="row">All keys</th><td class="num">${usage.total.toLocaleString('en')}</td><td class="num">100%</td></tr></tfoot>
</table>`,
)}
<script src="/console/assets/uPlot.iife.min.js" defer></script>
</section>`;
}

function healthSection(health: EndpointHealth[]): Html {
  const title = html`<h2 id="health-title">Webhook endpoints</h2>`;
  if (health.length === 0) {
    return html`<section class="card" aria-labelledby="health-title">${title}
<p class="empty">No webhook endpoint yet. <a href="/console/webhooks/new">Register an endpoint</a> to be told when records change.</p></section>`;
  }
  const rows = health.map(({ endpoint: e, lastSuccess: last, attempts24h, succeeded24h }) => {
    const state = endpointState(e);
    return html`<tr>
  <th scope="row"><a href="/console/webhooks/${e.id}">${e.url}</a></th>
  <td>${badge(state.badge, state.text)}</td>
  <td>${last ? formatTime(last) : 'Never'}</td>
  <td class="num">${e.consecutive_failures}</td>
  <td class="num">${attempts24h ? `${Math.round((succeeded24h / attempts24h) * 1000) / 10}% of ${attempts24h}` : 'No deliveries'}</td>
</tr>`;
  });
  return html`<section class="card" aria-labelledby="health-title">${title}
${scrollingTable(
  'Endpoint health',
  html`<table>
  <thead><tr><th scope="col">Endpoint</th><th scope="col">State</th><th scope="col">Last success</th><th scope="col" class="num">Failures in a row</th><th scope="col" class="num">Success rate, 24 h</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`,
)}</section>`;
}

/** Keys that stop working within EXPIRING_DAYS: seen here before integrations break. */
function expiringNotice(count: number): Html {
  return html`<p class="warning" role="status" id="expiring-keys"><strong>${count === 1 ? '1 API key expires' : `${count} API keys expire`} within ${EXPIRING_DAYS} days.</strong> <a href="/console/keys">Roll ${count === 1 ? 'it' : 'them'}</a> before the systems using ${count === 1 ? 'it' : 'them'} get 401.</p>`;
}

async function renderOverview(ctx: PageContext, range: Range, notice?: { kind: 'error'; text: string }) {
  const { services } = ctx;
  const workspaceId = ctx.admin.workspaceId;
  const now = services.clock();
  const to = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
  const spec = RANGES[range];
  const [usage, keys, endpoints] = await Promise.all([
    usageSeries(services.database.db, workspaceId, { from: to - spec.hours * HOUR_MS, to, bucket: spec.bucket }),
    listKeys(services.database.db, workspaceId, now),
    listEndpoints(services, workspaceId),
  ]);
  const health = await endpointHealth(services, workspaceId, endpoints, now);
  const liveKeys = keys.filter((k) => k.status === 'valid').length;
  const expiring = keys.filter((k) => k.expiring_soon).length;
  const delivering = endpoints.filter((e) => e.status !== 'disabled').length;
  const steps: Html[] = [];
  if (keys.length === 0) {
    steps.push(html`<li><a href="/console/keys">Create an API key</a>: it lets your tools read this workspace's records.</li>`);
  }
  if (endpoints.length === 0) {
    steps.push(html`<li><a href="/console/webhooks/new">Register a webhook endpoint</a>: your systems are told when records change.</li>`);
  }
  const gettingStarted = steps.length
    ? html`<section class="card getting-started" aria-labelledby="start-title"><h2 id="start-title">Getting started</h2><ol>${steps}</ol></section>`
    : html``;
  const counts = html`<ul class="stats">
  <li><a href="/console/keys"><strong>${liveKeys} of ${services.config.maxKeys}</strong> API keys</a></li>
  <li><a href="/console/webhooks"><strong>${delivering} of ${MAX_DELIVERING_ENDPOINTS}</strong> webhook endpoints delivering</a></li>
</ul>`;
  return layout(ctx, {
    title: 'Overview',
    nav: 'overview',
    notice,
    body: html`${gettingStarted}${expiring ? expiringNotice(expiring) : ''}${counts}${usageSection(usage, range)}${healthSection(health)}`,
  });
}

export function registerOverviewPage(scope: FastifyInstance, services: ConsoleServices): void {
  scope.get('/', async (request: FastifyRequest<{ Querystring: { range?: string } }>, reply) => {
    const ctx = pageContext(services, request);
    const asked = request.query.range;
    if (asked !== undefined && !Object.hasOwn(RANGES, asked)) {
      const text = `The range must be ${Object.keys(RANGES).join(' or ')}; showing the last 24 hours.`;
      return sendHtml(reply, await renderOverview(ctx, '24h', { kind: 'error', text }), 400);
    }
    return sendHtml(reply, await renderOverview(ctx, (asked as Range | undefined) ?? '24h'));
  });
}
