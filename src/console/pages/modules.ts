/**
 * Modules: what each holds, whether it is installed, install and uninstall (through setModule
 * in src/workspaces/workspaces.ts, the CLI's function). Uninstalling only changes the workspace's
 * module list: the records stay in the database, and the API answers the module's lists as
 * empty until it is installed again.
 */
import type { FastifyInstance } from 'fastify';
import type { ConsoleServices, NavEntry } from '../../console-kit/context.js';
import { type PageContext, pageContext } from '../../console-kit/context.js';
import { type Html, html } from '../../console-kit/html.js';
import { badge, csrfField, layout, sendHtml } from '../../console-kit/layout.js';
import { MODULE_INFO, type ModuleInfo, registerTitle } from '../../console-kit/scopes.js';
import { AppError } from '../../errors.js';
import { getWorkspace, setModule } from '../../workspaces/workspaces.js';

/** This page's entry in the console's main navigation. */
export const MODULES_NAV: NavEntry = { key: 'modules', label: 'Modules', href: '/console/modules' };

function moduleCard(ctx: PageContext, m: ModuleInfo, installed: boolean): Html {
  const state = m.alwaysInstalled
    ? badge('info', 'Always installed')
    : installed
      ? badge('good', 'Installed')
      : badge('neutral', 'Not installed');
  const action = m.alwaysInstalled
    ? html`<p class="hint">Part of every workspace; it cannot be uninstalled.</p>`
    : installed
      ? html`<form method="post" action="/console/modules/${m.module}/uninstall" data-confirm="Uninstall ${m.label}? Its records stay stored, but the API answers its lists as empty until you install it again.">
  ${csrfField(ctx)}
  <button type="submit" class="button danger-outline">Uninstall<span class="visually-hidden"> ${m.label}</span></button>
</form>`
      : html`<form method="post" action="/console/modules/${m.module}/install">
  ${csrfField(ctx)}
  <button type="submit" class="button primary">Install<span class="visually-hidden"> ${m.label}</span></button>
</form>`;
  return html`<article class="card module" aria-labelledby="mod-${m.module}">
  <header class="card-head"><h2 id="mod-${m.module}">${m.label}</h2>${state}</header>
  <ul class="plain">
    ${m.registers.map(
      (r) =>
        html`<li><strong>${registerTitle(r.path)}</strong> <code class="muted">/api/v1/${r.path}</code><br><span class="hint">${r.description}</span></li>`,
    )}
  </ul>
  <p class="hint">Scope: ${m.scopes.map((s) => html`<code class="chip">${s.scope}</code> `)}</p>
  ${action}
</article>`;
}

export function registerModulePages(scope: FastifyInstance, services: ConsoleServices): void {
  scope.get('/modules', async (request, reply) => {
    const ctx = pageContext(services, request);
    const ws = await getWorkspace(services.database.db, ctx.admin.workspaceId);
    const q = request.query as Record<string, string | undefined>;
    const changed = MODULE_INFO.find((m) => m.module === (q.installed ?? q.uninstalled));
    const notice = changed
      ? q.installed
        ? `${changed.label} installed. Its records are listed by the API again.`
        : `${changed.label} uninstalled. Its records are kept; the API lists them as empty until you install it again.`
      : undefined;
    const optional = MODULE_INFO.filter((m) => !m.alwaysInstalled);
    const always = MODULE_INFO.filter((m) => m.alwaysInstalled);
    return sendHtml(
      reply,
      layout(ctx, {
        title: 'Modules',
        nav: 'modules',
        notice: notice ? { kind: 'success', text: notice } : undefined,
        body: html`<p class="lead">Modules decide which registers this workspace uses. Uninstalling a module keeps its records stored,
but until it is installed again the API lists them as empty, answers 404 for a single record, and the module’s actions (and so
its webhook events) are refused.</p>
<h2 class="section">Optional modules</h2>
<div class="grid">${optional.map((m) => moduleCard(ctx, m, ws.modules.includes(m.module)))}</div>
<h2 class="section">Always installed</h2>
<div class="grid">${always.map((m) => moduleCard(ctx, m, true))}</div>`,
      }),
    );
  });

  // The confirmation without JavaScript (with it, console.js asks through data-confirm).
  scope.get('/modules/:module/uninstall', async (request, reply) => {
    const ctx = pageContext(services, request);
    const module = (request.params as { module: string }).module;
    const info = MODULE_INFO.find((m) => m.module === module && !m.alwaysInstalled);
    if (!info) throw new AppError('not_found', `There is no optional module called ${module.slice(0, 40)}.`);
    const body = html`<div class="card stack">
<p>You are about to uninstall <strong>${info.label}</strong>.</p>
<p>Its records stay stored. Until you install it again, the API lists them as empty and answers 404 for a single record, and its actions are refused.</p>
<form method="post" action="/console/modules/${info.module}/uninstall" class="actions">
  ${csrfField(ctx)}
  <button type="submit" class="button danger">Uninstall ${info.label}</button>
  <a class="button" href="/console/modules">Cancel</a>
</form>
</div>`;
    return sendHtml(reply, layout(ctx, { title: 'Uninstall module', nav: 'modules', body }));
  });

  for (const action of ['install', 'uninstall'] as const) {
    scope.post(`/modules/:module/${action}`, async (request, reply) => {
      const ctx = pageContext(services, request);
      const module = (request.params as { module: string }).module;
      const info = MODULE_INFO.find((m) => m.module === module);
      if (!info) throw new AppError('not_found', `There is no module called ${module.slice(0, 40)}.`);
      if (info.alwaysInstalled) throw new AppError('not_found', `${info.label} is always installed; it cannot be ${action}ed.`);
      await setModule(
        services.database.db,
        ctx.admin.workspaceId,
        module,
        action === 'install',
        new Date(services.clock()).toISOString(),
        ctx.actor,
      );
      return reply.redirect(`/console/modules?${action}ed=${module}`, 303);
    });
  }
}
