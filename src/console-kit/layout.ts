/** The page shell every console page is rendered in: header, navigation, main, sign-out form. */
import type { FastifyReply } from 'fastify';
import { assetUrl } from './assets.js';
import type { PageContext } from './context.js';
import { type Html, html } from './html.js';

export interface PageOptions {
  title: string;
  /** The key of the navigation entry shown as the current page. */
  nav?: string;
  body: Html;
  /** A one-line notice above the content (e.g. "Key revoked."). */
  notice?: { kind: 'success' | 'error' | 'info'; text: string };
}

/** A hidden CSRF field: every POST form must include it. */
export function csrfField(ctx: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.session.csrfToken}">`;
}

function document(title: string, inner: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · wsops console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetUrl('console.css')}">
<script src="${assetUrl('console.js')}" defer></script>
</head>
<body>
${inner}
</body>
</html>`;
}

/** A full page for a signed-in admin. */
export function layout(ctx: PageContext, options: PageOptions): Html {
  const nav = ctx.nav.map(
    (item) => html`<li><a href="${item.href}"${item.key === options.nav ? html` aria-current="page"` : ''}>${item.label}</a></li>`,
  );
  return document(
    options.title,
    html`<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/console">wsops</a>
  <span class="workspace" title="${ctx.admin.workspaceId}">${ctx.admin.workspaceName}</span>
  <nav aria-label="Main"><ul>${nav}</ul></nav>
  <form method="post" action="/console/sign-out" class="sign-out">
    ${csrfField(ctx)}
    <span class="who">${ctx.admin.email}</span>
    <button type="submit" class="link">Sign out</button>
  </form>
</header>
<main id="main" tabindex="-1">
  ${options.notice ? html`<p class="notice notice-${options.notice.kind}" role="status">${options.notice.text}</p>` : ''}
  <h1>${options.title}</h1>
  ${options.body}
</main>`,
  );
}

/** A page without navigation (sign-in, set password, errors before sign-in). */
export function bareLayout(title: string, body: Html): Html {
  return document(title, html`<main id="main" class="bare"><h1>${title}</h1>${body}</main>`);
}

/** A time as `2026-11-22 08:00 UTC` in a <time> element; `empty` when there is none. */
export function formatTime(iso: string | null | undefined, empty = '—', precision: 'minute' | 'second' = 'minute'): Html {
  if (!iso) return html`<span class="muted">${empty}</span>`;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return html`${iso}`;
  const text = `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, precision === 'second' ? 19 : 16)} UTC`;
  return html`<time datetime="${d.toISOString()}">${text}</time>`;
}

export type BadgeTone = 'good' | 'warn' | 'bad' | 'neutral' | 'info';

/** A status in words (colour only repeats what the word says). */
export function badge(tone: BadgeTone, text: string): Html {
  return html`<span class="badge badge-${tone}">${text}</span>`;
}

/**
 * A table that may be wider than the screen, scrolling in its own box. The box is a named region
 * a keyboard can reach (tabindex): otherwise a keyboard user cannot scroll it, and axe-core's
 * scrollable-region-focusable rule fails whenever the table overflows.
 */
export function scrollingTable(label: string, table: Html): Html {
  return html`<div class="table-scroll" tabindex="0" role="region" aria-label="${label}">${table}</div>`;
}

/** An empty state: what is missing and what to do next. */
export function emptyState(title: string, text: string, action?: Html): Html {
  return html`<div class="empty"><p class="empty-title">${title}</p><p>${text}</p>${action ?? ''}</div>`;
}

/** A page that only says something (an error, a refusal), with one way onward. */
export function messagePage(title: string, text: string, link?: { href: string; label: string }): Html {
  return bareLayout(
    title,
    html`<div class="card"><p>${text}</p>${link ? html`<p><a class="button" href="${link.href}">${link.label}</a></p>` : ''}</div>`,
  );
}

/** Sends a rendered page: HTML, never cached (pages may show a secret once). */
export function sendHtml(reply: FastifyReply, page: Html, status = 200): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(page.value);
}
