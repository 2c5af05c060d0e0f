/**
 * The audit trail: who did what and when, newest first, filtered by kind and actor (a GET form,
 * so a filtered view is a link), paged by seq ("Older entries"). Only the signed-in admin's
 * workspace is ever read.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ACTOR_KINDS, AUDIT_KINDS, type AuditQuery, type AuditRow, auditPage, describeActor } from '../../audit/audit.js';
import { describeAudit } from '../../audit-words.js';
import type { ConsoleServices, NavEntry } from '../../console-kit/context.js';
import { type PageContext, pageContext } from '../../console-kit/context.js';
import { type Html, html } from '../../console-kit/html.js';
import { formatTime, layout, scrollingTable, sendHtml } from '../../console-kit/layout.js';
import { AppError } from '../../errors.js';
import { listAdmins } from '../../sign-in/admins.js';

/** This page's entry in the console's main navigation. */
export const AUDIT_NAV: NavEntry = { key: 'audit', label: 'Audit trail', href: '/console/audit' };

const PAGE_SIZE = 50;

type RawQuery = Record<string, string | string[] | undefined>;

/** The one value of a query parameter; '' when absent or empty. */
function param(query: RawQuery, name: string): string {
  const v = query[name];
  return (Array.isArray(v) ? (v[v.length - 1] ?? '') : (v ?? '')).trim();
}

/** Reads the filters; a wrong value is reported by field (and the trail shown unfiltered by it). */
function readFilters(query: RawQuery): { filters: AuditQuery; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const filters: AuditQuery = { limit: PAGE_SIZE };
  const kind = param(query, 'kind');
  if (kind) {
    if (Object.hasOwn(AUDIT_KINDS, kind)) filters.kind = kind;
    else errors.kind = `"${kind.slice(0, 40)}" is not a kind of entry; choose one from the list.`;
  }
  const actor = param(query, 'actor');
  if (actor) {
    if (actor.length <= 320) filters.actor = actor;
    else errors.actor = 'That actor is too long to be one; choose one from the list.';
  }
  const before = param(query, 'before');
  if (before) {
    if (/^[1-9]\d{0,15}$/.test(before)) filters.before = Number(before);
    else errors.before = 'The page link is damaged; start again from the newest entries.';
  }
  return { filters, errors };
}

function link(filters: AuditQuery, before?: number): string {
  const q = new URLSearchParams();
  if (filters.kind) q.set('kind', filters.kind);
  if (filters.actor) q.set('actor', filters.actor);
  if (before !== undefined) q.set('before', String(before));
  const s = q.toString();
  return s ? `/console/audit?${s}` : '/console/audit';
}

/** The entry's details as "name: value" lines (ids and values as text). */
function details(e: AuditRow): Html {
  const lines: Html[] = [];
  if (e.target) lines.push(html`<div><dt>Target</dt><dd><code>${e.target}</code></dd></div>`);
  if (e.key_id && e.key_id !== e.target) lines.push(html`<div><dt>Key</dt><dd><code>${e.key_id}</code></dd></div>`);
  for (const [name, value] of Object.entries(e.detail)) {
    if (value === null || value === undefined || value === '') continue;
    const shown = Array.isArray(value) ? value.map(String).join(', ') : typeof value === 'object' ? JSON.stringify(value) : String(value);
    lines.push(html`<div><dt>${name.replace(/_/g, ' ')}</dt><dd>${shown.slice(0, 500)}</dd></div>`);
  }
  return lines.length ? html`<dl class="audit-details">${lines}</dl>` : html``;
}

function select(name: string, label: string, options: [string, string][], selected: string, error?: string): Html {
  const id = `f-${name}`;
  return html`<div class="field${error ? ' has-error' : ''}">
  <label for="${id}">${label}</label>
  <select id="${id}" name="${name}"${error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}>
    ${options.map(([value, text]) => html`<option value="${value}"${value === selected ? html` selected` : ''}>${text}</option>`)}
  </select>
  ${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
</div>`;
}

async function renderAudit(ctx: PageContext, query: RawQuery) {
  const { filters, errors } = readFilters(query);
  const db = ctx.services.database.db;
  const workspaceId = ctx.admin.workspaceId;
  const [page, admins] = await Promise.all([auditPage(db, workspaceId, filters), listAdmins(db, workspaceId)]);
  const actorOptions: [string, string][] = [
    ['', 'Everyone'],
    ...Object.entries(ACTOR_KINDS),
    ...admins.map((a): [string, string] => [`console:${a.email}`, a.email]),
  ];
  if (filters.actor && !actorOptions.some(([v]) => v === filters.actor)) actorOptions.push([filters.actor, describeActor(filters.actor)]);
  const filtered = filters.kind !== undefined || filters.actor !== undefined;
  const form = html`<form method="get" action="/console/audit" class="filters" role="search" aria-label="Filter the audit trail">
  ${select('kind', 'Kind', [['', 'Every kind'], ...Object.entries(AUDIT_KINDS)], filters.kind ?? '', errors.kind)}
  ${select('actor', 'Who', actorOptions, filters.actor ?? '', errors.actor)}
  <div class="actions"><button type="submit">Filter</button>${filtered ? html` <a href="/console/audit">Show everything</a>` : ''}</div>
</form>`;
  let body: Html;
  if (page.entries.length === 0) {
    body = filtered
      ? html`<div class="empty"><p>No entry matches these filters${filters.before ? ' on this page' : ''}.</p><p><a href="/console/audit">Show the whole trail</a></p></div>`
      : html`<div class="empty"><p>Nothing is recorded yet. Every change to this workspace appears here: API keys created and revoked, webhook endpoints registered or switched off, modules, admins, and corrections made by the operator.</p>
<p><a href="/console/keys">Create an API key</a> or <a href="/console/webhooks/new">register a webhook endpoint</a> to begin.</p></div>`;
  } else {
    const rows = page.entries.map(
      (e) => html`<tr>
  <td class="nowrap">${formatTime(e.at)}</td>
  <td>${describeActor(e.actor)}</td>
  <td>${describeAudit(e)}</td>
  <td>${details(e)}</td>
</tr>`,
    );
    body = scrollingTable(
      'Audit entries',
      html`<table class="audit">
  <caption class="visually-hidden">Audit trail, newest first</caption>
  <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Details</th></tr></thead>
  <tbody>${rows}</tbody>
</table>`,
    );
  }
  const pager = html`<nav class="pager" aria-label="Pages of the audit trail">
  ${filters.before !== undefined ? html`<a href="${link(filters)}">Newest entries</a>` : ''}
  ${page.nextBefore !== null ? html`<a href="${link(filters, page.nextBefore)}" rel="next">Older entries</a>` : ''}
</nav>`;
  const status = Object.keys(errors).length ? 400 : 200;
  return {
    status,
    page: layout(ctx, {
      title: 'Audit trail',
      nav: 'audit',
      notice: status === 400 ? { kind: 'error', text: Object.values(errors).join(' ') } : undefined,
      body: html`<p class="lead">Who did what and when in ${ctx.admin.workspaceName}, newest first. Times are UTC.</p>${form}${body}${pager}`,
    }),
  };
}

export function registerAuditPage(scope: FastifyInstance, services: ConsoleServices): void {
  scope.get('/audit', async (request: FastifyRequest, reply) => {
    const ctx = pageContext(services, request);
    try {
      const { status, page } = await renderAudit(ctx, request.query as RawQuery);
      return sendHtml(reply, page, status);
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_parameter') {
        return sendHtml(
          reply,
          layout(ctx, {
            title: 'Audit trail',
            nav: 'audit',
            notice: { kind: 'error', text: err.message },
            body: html`<p><a href="/console/audit">Show the whole trail</a></p>`,
          }),
          400,
        );
      }
      throw err;
    }
  });
}
