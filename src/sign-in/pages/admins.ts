/**
 * Admins: who can sign in to this workspace's console, invite another (a one-time link to pass
 * on, valid 24 hours), remove one (never yourself, never the last). Removing an admin ends
 * their sessions; keys and endpoints they created keep working.
 */
import type { FastifyInstance } from 'fastify';
import type { ConsoleServices, NavEntry } from '../../console-kit/context.js';
import { type PageContext, pageContext } from '../../console-kit/context.js';
import { type FieldErrors, formError, formValue, textField } from '../../console-kit/forms.js';
import { type Html, html } from '../../console-kit/html.js';
import { badge, csrfField, formatTime, layout, scrollingTable, sendHtml } from '../../console-kit/layout.js';
import { AppError } from '../../errors.js';
import type { Admin } from '../admin-rows.js';
import { listAdmins, removeAdmin } from '../admins.js';
import { inviteAdmin, signInUrl, ssoSignInUrl } from '../sign-in-links.js';

/** This page's entry in the console's main navigation. */
export const ADMINS_NAV: NavEntry = { key: 'admins', label: 'Admins', href: '/console/admins' };

const ADMIN_ID = /^adm_[0-9A-Za-z]{16}$/;

function addedBy(actor: string): string {
  if (actor.startsWith('console:')) return actor.slice('console:'.length);
  if (actor === 'cli') return 'Operator (CLI)';
  return actor;
}

function adminTable(ctx: PageContext, admins: Admin[]): Html {
  const rows = admins.map(
    (a) => html`<tr>
  <td class="wrap">${a.email}${a.id === ctx.admin.id ? html` ${badge('info', 'you')}` : ''}</td>
  <td>${formatTime(a.created_at)}</td>
  <td class="wrap">${addedBy(a.created_by)}</td>
  <td>${a.password_set ? formatTime(a.last_sign_in_at, 'never') : badge('warn', 'Invited, not signed in yet')}</td>
  <td>${
    a.id === ctx.admin.id || admins.length <= 1
      ? ''
      : html`<a class="button small danger-outline" href="/console/admins/${a.id}/remove">Remove<span class="visually-hidden"> ${a.email}</span></a>`
  }</td>
</tr>`,
  );
  return scrollingTable(
    'Admins',
    html`<table>
  <thead><tr><th scope="col">Email</th><th scope="col">Added</th><th scope="col">Added by</th><th scope="col">Last sign-in</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`,
  );
}

async function renderPage(
  ctx: PageContext,
  options: {
    email?: string;
    errors?: FieldErrors;
    link?: { url: string; email: string; expiresAt: string; created: boolean; ssoOnly: boolean };
    notice?: string;
  } = {},
): Promise<Html> {
  const admins = await listAdmins(ctx.services.database.db, ctx.admin.workspaceId);
  const linkCard = options.link?.ssoOnly
    ? html`<section class="card" aria-labelledby="invite-link">
<h2 id="invite-link">${options.link.email} signs in with single sign-on</h2>
<p>Password sign-in is off for this workspace, so no sign-in link is made. Tell ${options.link.email} to sign in with single sign-on at
<code>${options.link.url}</code>.</p>
</section>`
    : options.link
      ? html`<section class="card secret-card" aria-labelledby="invite-link">
<h2 id="invite-link">Sign-in link for ${options.link.email}</h2>
<p class="warning" role="alert"><strong>Pass this link on privately; it is shown only now.</strong> It works once, until ${formatTime(options.link.expiresAt)} (24 hours).
Following it, ${options.link.email} chooses a password and is signed in.</p>
<div class="secret">
  <label for="invite-url" class="visually-hidden">Sign-in link</label>
  <input id="invite-url" class="secret-value" type="text" value="${options.link.url}" readonly spellcheck="false" autocomplete="off">
  <button type="button" class="button" data-copy="invite-url">Copy</button>
</div>
</section>`
      : '';
  return layout(ctx, {
    title: 'Admins',
    nav: 'admins',
    notice: options.notice ? { kind: 'success', text: options.notice } : undefined,
    body: html`<p class="lead">Admins sign in here to manage this workspace. An email address can be an admin of one workspace only.</p>
${linkCard}
<section aria-labelledby="admin-list">
<h2 id="admin-list">${admins.length === 1 ? '1 admin' : `${admins.length} admins`}</h2>
${adminTable(ctx, admins)}
${admins.length <= 1 ? html`<p class="hint">You are the only admin. Invite a colleague so someone else can help, or take over if you are away.</p>` : ''}
</section>
<section class="card" aria-labelledby="invite">
<h2 id="invite">Invite an admin</h2>
<form method="post" action="/console/admins" class="stack" novalidate>
  ${csrfField(ctx)}
  ${formError(options.errors)}
  ${textField({
    name: 'email',
    label: 'Email address',
    type: 'email',
    value: options.email ?? '',
    hint: 'You get a one-time sign-in link to pass on (nothing is emailed). For an existing admin who forgot their password, this makes a new link.',
    errors: options.errors,
    required: true,
    attrs: html`autocomplete="off"`,
  })}
  <div><button type="submit" class="button primary">Create sign-in link</button></div>
</form>
</section>`,
  });
}

export function registerAdminPages(scope: FastifyInstance, services: ConsoleServices): void {
  scope.get('/admins', async (request, reply) => {
    const ctx = pageContext(services, request);
    const removed = (request.query as Record<string, string | undefined>).removed;
    const notice = removed === '1' ? 'Admin removed. They were signed out; keys and endpoints they created keep working.' : undefined;
    return sendHtml(reply, await renderPage(ctx, { notice }));
  });

  scope.post('/admins', async (request, reply) => {
    const ctx = pageContext(services, request);
    const email = formValue(request.body, 'email');
    try {
      const link = await inviteAdmin(services.database, {
        workspaceId: ctx.admin.workspaceId,
        email,
        actor: ctx.actor,
        now: services.clock(),
      });
      const url = link.ssoOnly
        ? ssoSignInUrl(services.config.baseUrl, ctx.admin.workspaceId)
        : signInUrl(services.config.baseUrl, link.token);
      return sendHtml(
        reply,
        await renderPage(ctx, {
          link: { url, email: link.admin.email, expiresAt: link.expiresAt, created: link.created, ssoOnly: link.ssoOnly },
          notice: link.created
            ? `${link.admin.email} added as an admin.`
            : link.ssoOnly
              ? `${link.admin.email} is already an admin.`
              : `New sign-in link made for ${link.admin.email}.`,
        }),
        201,
      );
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendHtml(reply, await renderPage(ctx, { email, errors: { email: err.message } }), 400);
    }
  });

  scope.get('/admins/:id/remove', async (request, reply) => {
    const ctx = pageContext(services, request);
    const id = (request.params as { id: string }).id;
    const target = (await listAdmins(services.database.db, ctx.admin.workspaceId)).find((a) => a.id === id);
    if (!target) throw new AppError('not_found', 'There is no such admin in this workspace.');
    const body = html`<div class="card stack">
<p>You are about to remove <strong>${target.email}</strong> as an admin of ${ctx.admin.workspaceName}.</p>
<p>They are signed out at once and their sign-in links stop working. Keys and webhook endpoints they created keep working.</p>
<form method="post" action="/console/admins/${target.id}/remove" class="actions">
  ${csrfField(ctx)}
  <button type="submit" class="button danger">Remove ${target.email}</button>
  <a class="button" href="/console/admins">Cancel</a>
</form>
</div>`;
    return sendHtml(reply, layout(ctx, { title: 'Remove admin', nav: 'admins', body }));
  });

  scope.post('/admins/:id/remove', async (request, reply) => {
    const ctx = pageContext(services, request);
    const id = (request.params as { id: string }).id;
    if (!ADMIN_ID.test(id)) throw new AppError('not_found', 'There is no such admin in this workspace.');
    try {
      await removeAdmin(services.database, {
        workspaceId: ctx.admin.workspaceId,
        admin: id,
        actor: ctx.actor,
        now: services.clock(),
        byAdminId: ctx.admin.id,
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_state') {
        return sendHtml(reply, await renderPage(ctx, { errors: { _form: `${err.message}.` } }), 409);
      }
      if (err instanceof AppError && err.code === 'not_found') throw new AppError('not_found', 'There is no such admin in this workspace.');
      throw err;
    }
    return reply.redirect('/console/admins?removed=1', 303);
  });
}
