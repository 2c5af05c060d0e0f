/**
 * SCIM provisioning: the workspace SCIM tokens identity providers (Okta, Entra ID) provision
 * people with. Create (the token shown once, with the base URL to paste beside it), list, revoke
 * with a confirmation. The rules are src/scim/tokens.ts's, as for the CLI.
 */
import type { FastifyInstance } from 'fastify';
import type { ConsoleServices, NavEntry } from '../console-kit/context.js';
import { type PageContext, pageContext } from '../console-kit/context.js';
import { type FieldErrors, formError, formValue, textField } from '../console-kit/forms.js';
import { type Html, html } from '../console-kit/html.js';
import { badge, csrfField, emptyState, formatTime, layout, scrollingTable, sendHtml } from '../console-kit/layout.js';
import { AppError } from '../errors.js';
import { createScimToken, listScimTokens, MAX_SCIM_TOKENS, revokeScimToken, type ScimTokenSummary } from './tokens.js';

/** This page's entry in the console's main navigation. */
export const SCIM_NAV: NavEntry = { key: 'scim', label: 'SCIM provisioning', href: '/console/scim' };

const TOKEN_ID = /^[0-9A-Za-z]{16}$/;

async function locations(ctx: PageContext): Promise<{ id: string; label: string }[]> {
  const rows = await ctx.services.database.db
    .selectFrom('records')
    .select(['id', 'doc'])
    .where('workspace_id', '=', ctx.admin.workspaceId)
    .where('register', '=', 'locations')
    .orderBy('id')
    .limit(500)
    .execute();
  return rows.map((r) => {
    const doc = JSON.parse(r.doc) as { name?: string; kind?: string };
    return { id: r.id, label: `${doc.name ?? r.id} (${String(doc.kind ?? '').toLowerCase()})` };
  });
}

function tokenTable(tokens: ScimTokenSummary[]): Html {
  if (tokens.length === 0) {
    return emptyState('No SCIM tokens yet', 'Create one for each identity provider that should provision people into this workspace.');
  }
  const rows = [...tokens].reverse().map(
    (t) => html`<tr>
  <td><code>${t.token_id}</code></td>
  <td class="wrap">${t.name}</td>
  <td><code>${t.location_id}</code></td>
  <td>${formatTime(t.created_at)}</td>
  <td>${formatTime(t.expires_at, 'never')}</td>
  <td>${formatTime(t.last_used_at, 'never')}</td>
  <td>${t.status === 'valid' ? badge('good', 'Valid') : t.status === 'expired' ? badge('neutral', 'Expired') : badge('neutral', 'Revoked')}</td>
  <td class="actions">${
    t.status === 'valid'
      ? html`<a class="button small danger-outline" href="/console/scim/${t.token_id}/revoke">Revoke<span class="visually-hidden"> token ${t.token_id}</span></a>`
      : ''
  }</td>
</tr>`,
  );
  return scrollingTable(
    'SCIM tokens',
    html`<table>
  <thead><tr><th scope="col">Token ID</th><th scope="col">Name</th><th scope="col">New people at</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`,
  );
}

async function renderPage(
  ctx: PageContext,
  options: {
    form?: { name: string; location: string; days: string };
    errors?: FieldErrors;
    created?: ScimTokenSummary & { token: string };
    notice?: string;
  },
): Promise<Html> {
  const { services, admin } = ctx;
  const [tokens, places] = await Promise.all([listScimTokens(services.database.db, admin.workspaceId, services.clock()), locations(ctx)]);
  const form = options.form ?? { name: '', location: places[0]?.id ?? '', days: '' };
  const base = `${services.config.baseUrl}/scim/v2`;
  const created = options.created;
  return layout(ctx, {
    title: 'SCIM provisioning',
    nav: 'scim',
    notice: options.notice ? { kind: 'success', text: options.notice } : undefined,
    body: html`<p class="lead">Identity providers (Okta, Microsoft Entra ID) create, update and deactivate this workspace’s people through SCIM 2.0. Give the provider the base URL <code>${base}</code> and a token from here. Groups are not provisioned: a person has one team.</p>
${
  created
    ? html`<section class="card secret-card" aria-labelledby="new-token">
<h2 id="new-token">Your new SCIM token</h2>
<p class="warning" role="alert"><strong>Copy it now: you won’t see it again.</strong> Only its token ID (<code>${created.token_id}</code>) is kept.</p>
<div class="secret">
  <label for="new-token-value" class="visually-hidden">SCIM token</label>
  <input id="new-token-value" class="secret-value" type="text" value="${created.token}" readonly spellcheck="false" autocomplete="off">
  <button type="button" class="button" data-copy="new-token-value">Copy</button>
</div>
<p class="hint">Base URL: <code>${base}</code>. Authentication: HTTP header (Okta) or secret token (Entra ID), the token above.</p>
</section>`
    : ''
}
<section class="card" aria-labelledby="create-token">
<h2 id="create-token">Create a SCIM token</h2>
<form method="post" action="/console/scim" class="stack" novalidate>
  ${csrfField(ctx)}
  ${formError(options.errors)}
  ${textField({ name: 'name', label: 'Name', value: form.name, hint: 'The identity provider, e.g. “Okta”.', errors: options.errors, required: true, attrs: html`maxlength="100"` })}
  <div class="field${options.errors?.location ? ' has-error' : ''}">
    <label for="f-location">New people are placed at</label>
    <p class="hint">People the provider creates need a location; they keep it until the system of record moves them.</p>
    ${options.errors?.location ? html`<p class="error">${options.errors.location}</p>` : ''}
    <select id="f-location" name="location">${places.map((p) => html`<option value="${p.id}"${p.id === form.location ? html` selected` : ''}>${p.label}</option>`)}</select>
  </div>
  ${textField({ name: 'days', label: 'Expires after (days)', value: form.days, hint: 'Empty: the token works until revoked. At most 365.', errors: options.errors, attrs: html`inputmode="numeric" maxlength="3"` })}
  <div><button type="submit" class="button primary">Create token</button></div>
</form>
</section>
<section aria-labelledby="all-tokens">
<h2 id="all-tokens">All SCIM tokens</h2>
<p class="hint">At most ${MAX_SCIM_TOKENS} valid tokens. A SCIM token cannot read the API, and an API key cannot call SCIM.</p>
${tokenTable(tokens)}
</section>`,
  });
}

export function registerScimPages(scope: FastifyInstance, services: ConsoleServices): void {
  scope.get('/scim', async (request, reply) => {
    const ctx = pageContext(services, request);
    const revoked = (request.query as Record<string, string | undefined>).revoked;
    const notice = revoked && TOKEN_ID.test(revoked) ? `SCIM token ${revoked} revoked. Requests with it now get 401.` : undefined;
    return sendHtml(reply, await renderPage(ctx, { notice }));
  });

  scope.post('/scim', async (request, reply) => {
    const ctx = pageContext(services, request);
    const form = {
      name: formValue(request.body, 'name'),
      location: formValue(request.body, 'location'),
      days: formValue(request.body, 'days').trim(),
    };
    const errors: FieldErrors = {};
    try {
      if (form.days !== '' && !/^\d{1,3}$/.test(form.days)) {
        throw new AppError('invalid_parameter', 'Give the days as a whole number from 1 to 365, or leave it empty.', { param: 'days' });
      }
      const created = await createScimToken(services.database, {
        workspaceId: ctx.admin.workspaceId,
        environment: services.config.env,
        locationId: form.location,
        name: form.name,
        days: form.days === '' ? undefined : Number(form.days),
        createdBy: ctx.actor,
        now: services.clock(),
      });
      // The token is in this response only (sent with Cache-Control: no-store), never stored.
      return sendHtml(reply, await renderPage(ctx, { created, notice: `SCIM token ${created.token_id} created.` }), 201);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      errors[typeof err.extra.param === 'string' ? err.extra.param : '_form'] = err.message;
    }
    return sendHtml(reply, await renderPage(ctx, { form, errors }), 400);
  });

  scope.get('/scim/:tokenId/revoke', async (request, reply) => {
    const ctx = pageContext(services, request);
    const tokenId = (request.params as { tokenId: string }).tokenId;
    const token = TOKEN_ID.test(tokenId)
      ? (await listScimTokens(services.database.db, ctx.admin.workspaceId, services.clock())).find((t) => t.token_id === tokenId)
      : undefined;
    if (!token) throw new AppError('not_found', `There is no SCIM token ${tokenId.slice(0, 40)} in this workspace.`);
    const body = html`<div class="card stack">
<p>You are about to revoke SCIM token <code>${token.token_id}</code>, <strong>${token.name}</strong>.</p>
<p class="warning">The identity provider using it gets <strong>401</strong> from its next request and stops provisioning people. This cannot be undone.</p>
<form method="post" action="/console/scim/${token.token_id}/revoke" class="actions">
  ${csrfField(ctx)}
  <button type="submit" class="button danger">Revoke SCIM token ${token.token_id}</button>
  <a class="button" href="/console/scim">Cancel</a>
</form>
</div>`;
    return sendHtml(reply, layout(ctx, { title: 'Revoke SCIM token', nav: 'scim', body }));
  });

  scope.post('/scim/:tokenId/revoke', async (request, reply) => {
    const ctx = pageContext(services, request);
    const tokenId = (request.params as { tokenId: string }).tokenId;
    if (!TOKEN_ID.test(tokenId)) throw new AppError('not_found', `There is no SCIM token ${tokenId.slice(0, 40)} in this workspace.`);
    await revokeScimToken(services.database.db, ctx.admin.workspaceId, tokenId, services.clock(), ctx.actor);
    return reply.redirect(`/console/scim?revoked=${tokenId}`, 303);
  });
}
