/**
 * API keys: create (the full key shown once, optionally limited to IP ranges), list with status,
 * last use and what needs attention in words, roll with a grace, change the IP allowlist,
 * revoke with a confirmation. The rules are those of src/keys/keys.ts (the CLI's too): nothing is checked
 * here a second time except that a form field holds a whole number.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ConsoleServices, NavEntry } from '../console-kit/context.js';
import { type PageContext, pageContext } from '../console-kit/context.js';
import { type FieldErrors, formError, formValue, formValues, textField } from '../console-kit/forms.js';
import { type Html, html } from '../console-kit/html.js';
import { badge, csrfField, emptyState, formatTime, layout, scrollingTable, sendHtml } from '../console-kit/layout.js';
import { SCOPE_INFO } from '../console-kit/scopes.js';
import { AppError } from '../errors.js';
import { CIDR_EXAMPLE } from '../ip-ranges.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import { setAllowedIps } from './key-allowlists.js';
import type { KeySummary } from './key-summary.js';
import { DEFAULT_KEY_DAYS, EXPIRING_DAYS, MAX_KEY_DAYS, ROLL_GRACES, UNUSED_DAYS } from './key-terms.js';
import { createKey, listKeys, parseScopes, revokeKey, rollKey } from './keys.js';

/** This page's entry in the console's main navigation. */
export const KEYS_NAV: NavEntry = { key: 'keys', label: 'API keys', href: '/console/keys' };

const KEY_ID = /^[0-9A-Za-z]{16}$/;

const DAY_MS = 86_400_000;

interface KeyForm {
  name: string;
  scopes: string[];
  environment: string;
  days: string;
  allowedIps: string;
}

/** The roll form's choices, in the order shown. */
const GRACE_LABELS: Record<string, string> = {
  '0': 'Now: the old key stops working at once',
  '1h': 'In 1 hour',
  '24h': 'In 24 hours',
  '7d': 'In 7 days',
};

/** Counted as createKey counts toward the plan limit: valid and not on its way out after a roll. */
function countsTowardLimit(k: KeySummary): boolean {
  return k.status === 'valid' && k.revoked_at === null;
}

function statusBadge(k: KeySummary, now: number): Html {
  if (k.status === 'valid' && k.revoked_at)
    return html`${badge('warn', 'Rolled')} <span class="hint">revoked ${formatTime(k.revoked_at)}</span>`;
  if (k.status === 'valid' && k.expiring_soon) {
    const days = Math.max(0, Math.ceil((Date.parse(k.expires_at) - now) / DAY_MS));
    return badge('warn', `Expires in ${days} day${days === 1 ? '' : 's'}`);
  }
  if (k.status === 'valid') return badge('good', 'Valid');
  if (k.status === 'expired') return badge('warn', 'Expired');
  return badge('neutral', 'Revoked');
}

/** When and from where, and a mark on keys nobody uses (candidates for revocation). */
function lastUse(k: KeySummary): Html {
  const when = formatTime(k.last_used_at, 'never');
  const where = k.last_used_ip ? html`<br><span class="hint">from <code>${k.last_used_ip}</code></span>` : '';
  const mark = k.unused ? html`<br>${badge('warn', k.last_used_at ? `Unused ${UNUSED_DAYS}+ days` : 'Never used')}` : '';
  return html`${when}${where}${mark}`;
}

function allowlistCell(k: KeySummary): Html {
  return k.allowed_ips
    ? html`${k.allowed_ips.map((c) => html`<code class="chip">${c}</code> `)}`
    : html`<span class="muted">any address</span>`;
}

function actorLabel(actor: string | null): string {
  if (!actor) return '—';
  if (actor.startsWith('console:')) return actor.slice('console:'.length);
  if (actor === 'cli') return 'Operator (CLI)';
  if (actor === 'demo') return 'Demo set-up';
  return actor;
}

function keyTable(keys: KeySummary[], now: number): Html {
  if (keys.length === 0) {
    return emptyState(
      'No API keys yet',
      'A key lets another system (your intranet, a reporting tool) read this workspace’s records. Create one with the form above.',
    );
  }
  const rows = [...keys].reverse().map(
    (k) => html`<tr>
  <td><code>${k.key_id}</code></td>
  <td class="wrap">${k.name}</td>
  <td class="scopes">${k.scopes.map((s) => html`<code class="chip">${s}</code> `)}</td>
  <td>${k.environment === 'live' ? badge('info', 'live') : badge('neutral', 'test')}</td>
  <td class="wrap">${actorLabel(k.created_by)}</td>
  <td>${formatTime(k.created_at)}</td>
  <td>${formatTime(k.expires_at)}</td>
  <td>${lastUse(k)}</td>
  <td class="wrap">${allowlistCell(k)}</td>
  <td>${statusBadge(k, now)}</td>
  <td class="actions">${
    k.status === 'revoked'
      ? ''
      : html`${k.status === 'valid' && k.revoked_at === null ? html`<a class="button small" href="/console/keys/${k.key_id}/roll">Roll<span class="visually-hidden"> key ${k.key_id}</span></a> ` : ''}<a class="button small" href="/console/keys/${k.key_id}/allowlist">IP allowlist<span class="visually-hidden"> of key ${k.key_id}</span></a> <a class="button small danger-outline" href="/console/keys/${k.key_id}/revoke">Revoke<span class="visually-hidden"> key ${k.key_id}</span></a>`
  }</td>
</tr>`,
  );
  return scrollingTable(
    'API keys',
    html`<table>
  <thead><tr><th scope="col">Key ID</th><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Environment</th><th scope="col">Created by</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Allowed from</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`,
  );
}

function createForm(ctx: PageContext, form: KeyForm, installed: readonly string[], errors?: FieldErrors): Html {
  const env = ctx.services.config.env;
  const scopeError = errors?.scopes;
  const boxes = SCOPE_INFO.map((s) => {
    const notInstalled = s.module !== undefined && !installed.includes(s.module);
    return html`<li>
  <label class="check">
    <input type="checkbox" name="scopes" value="${s.scope}"${form.scopes.includes(s.scope) ? html` checked` : ''}>
    <span><code>${s.scope}</code>${notInstalled ? html` ${badge('neutral', 'module not installed')}` : ''}
    <span class="hint">${s.description}</span></span>
  </label>
</li>`;
  });
  return html`<section class="card" aria-labelledby="create-key">
<h2 id="create-key">Create a key</h2>
<form method="post" action="/console/keys" class="stack" novalidate>
  ${csrfField(ctx)}
  ${formError(errors)}
  ${textField({ name: 'name', label: 'Name', value: form.name, hint: 'Who or what will use it, e.g. “Intranet directory sync”.', errors, required: true, attrs: html`maxlength="100"` })}
  <fieldset class="field${scopeError ? ' has-error' : ''}"${scopeError ? html` aria-describedby="f-scopes-error"` : ''}>
    <legend>Scopes</legend>
    <p class="hint">What the key may read. Give it only what the system needs.</p>
    ${scopeError ? html`<p class="error" id="f-scopes-error">${scopeError}</p>` : ''}
    <ul class="checks">${boxes}</ul>
  </fieldset>
  <fieldset class="field${errors?.environment ? ' has-error' : ''}">
    <legend>Environment</legend>
    <p class="hint">Only keys of this deployment’s environment (<strong>${env}</strong>) work against this server’s API.</p>
    ${errors?.environment ? html`<p class="error">${errors.environment}</p>` : ''}
    <div class="radios">
      ${(['live', 'test'] as const).map(
        (e) =>
          html`<label class="check"><input type="radio" name="environment" value="${e}"${form.environment === e ? html` checked` : ''}> <span>${e}${e === env ? ' (this deployment)' : ''}</span></label>`,
      )}
    </div>
  </fieldset>
  ${textField({
    name: 'days',
    label: 'Life in days',
    type: 'number',
    value: form.days,
    hint: `1 to ${MAX_KEY_DAYS}. The key stops working after that; create a new one before.`,
    errors,
    required: true,
    attrs: html`min="1" max="${MAX_KEY_DAYS}" step="1" inputmode="numeric"`,
  })}
  ${allowlistField(form.allowedIps, errors)}
  <div><button type="submit" class="button primary">Create key</button></div>
</form>
</section>`;
}

function allowlistField(value: string, errors?: FieldErrors): Html {
  return textField({
    name: 'allowed_ips',
    label: 'Allowed IP ranges (optional)',
    value,
    hint: `Only requests from these addresses are accepted with the key; others get 403 ip_not_allowed. CIDR ranges separated by commas or spaces, ${CIDR_EXAMPLE}. Empty: any address.`,
    errors,
    attrs: html`maxlength="2000" spellcheck="false" autocomplete="off"`,
  });
}

function newKeyCard(created: KeySummary & { key: string }): Html {
  return html`<section class="card secret-card" aria-labelledby="new-key">
<h2 id="new-key">Your new key</h2>
<p class="warning" role="alert"><strong>Copy it now: you won’t see it again.</strong> Only its key ID (<code>${created.key_id}</code>) is kept; if it is lost, revoke it and create another.</p>
<div class="secret">
  <label for="new-key-value" class="visually-hidden">API key</label>
  <input id="new-key-value" class="secret-value" type="text" value="${created.key}" readonly spellcheck="false" autocomplete="off">
  <button type="button" class="button" data-copy="new-key-value">Copy</button>
</div>
<p class="hint">Send it as <code>Authorization: Bearer &lt;key&gt;</code>. It expires ${formatTime(created.expires_at)}.</p>
</section>`;
}

async function renderPage(
  ctx: PageContext,
  options: { form?: KeyForm; errors?: FieldErrors; created?: KeySummary & { key: string }; notice?: string },
): Promise<Html> {
  const { services, admin } = ctx;
  const [keys, workspace] = await Promise.all([
    listKeys(services.database.db, admin.workspaceId, services.clock()),
    getWorkspace(services.database.db, admin.workspaceId),
  ]);
  const used = keys.filter(countsTowardLimit).length;
  const max = services.config.maxKeys;
  const form = options.form ?? { name: '', scopes: [], environment: services.config.env, days: String(DEFAULT_KEY_DAYS), allowedIps: '' };
  const now = services.clock();
  const expiring = keys.filter((k) => k.expiring_soon).length;
  const unused = keys.filter((k) => k.unused).length;
  return layout(ctx, {
    title: 'API keys',
    nav: 'keys',
    notice: options.notice ? { kind: 'success', text: options.notice } : undefined,
    body: html`<p class="lead">Keys let other systems read this workspace’s records through the API.
<span class="meter">${used} of ${max} keys</span> <span class="hint">(valid keys count toward your plan’s limit; revoked and expired ones do not).</span></p>
${options.created ? newKeyCard(options.created) : ''}
${expiring ? html`<p class="warning" role="status" id="expiring-keys"><strong>${expiring === 1 ? '1 key expires' : `${expiring} keys expire`} within ${EXPIRING_DAYS} days.</strong> Roll ${expiring === 1 ? 'it' : 'them'}: the successor gets the same name and scopes, and the old key keeps working for the grace you choose.</p>` : ''}
${unused ? html`<p class="hint" id="unused-keys">${unused === 1 ? '1 valid key has' : `${unused} valid keys have`} not been used in ${UNUSED_DAYS} days or never: revoke what nobody needs.</p>` : ''}
${createForm(ctx, form, workspace.modules, options.errors)}
<section aria-labelledby="all-keys">
<h2 id="all-keys">All keys</h2>
<p class="hint">Last use is recorded at most once a minute per key, with the client’s address.</p>
${keyTable(keys, now)}
</section>`,
  });
}

async function findKey(ctx: PageContext, keyId: string): Promise<KeySummary> {
  const key = KEY_ID.test(keyId)
    ? (await listKeys(ctx.services.database.db, ctx.admin.workspaceId, ctx.services.clock())).find((k) => k.key_id === keyId)
    : undefined;
  if (!key) throw new AppError('not_found', `There is no key ${keyId.slice(0, 40)} in this workspace.`);
  return key;
}

function readForm(request: FastifyRequest): KeyForm {
  return {
    name: formValue(request.body, 'name'),
    scopes: formValues(request.body, 'scopes'),
    environment: formValue(request.body, 'environment'),
    days: formValue(request.body, 'days').trim(),
    allowedIps: formValue(request.body, 'allowed_ips').trim(),
  };
}

export function registerKeyPages(scope: FastifyInstance, services: ConsoleServices): void {
  scope.get('/keys', async (request, reply) => {
    const ctx = pageContext(services, request);
    const revoked = (request.query as Record<string, string | undefined>).revoked;
    const allowlist = (request.query as Record<string, string | undefined>).allowlist;
    const notice =
      revoked && KEY_ID.test(revoked)
        ? `Key ${revoked} revoked. Requests with it now get 401.`
        : allowlist && KEY_ID.test(allowlist)
          ? `IP allowlist of key ${allowlist} saved; it applies from the next request.`
          : undefined;
    return sendHtml(reply, await renderPage(ctx, { notice }));
  });

  scope.post('/keys', async (request, reply) => {
    const ctx = pageContext(services, request);
    const form = readForm(request);
    const errors: FieldErrors = {};
    let scopes: string[] = [];
    if (form.scopes.length === 0) errors.scopes = 'Choose at least one scope: a key without scopes can read nothing.';
    else {
      try {
        scopes = parseScopes(form.scopes.join(','));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        errors.scopes = err.message;
      }
    }
    if (form.environment !== 'live' && form.environment !== 'test') errors.environment = 'Choose live or test.';
    if (!/^\d+$/.test(form.days)) errors.days = `Enter a whole number of days from 1 to ${MAX_KEY_DAYS}.`;
    if (Object.keys(errors).length === 0) {
      try {
        const created = await createKey(services.database, {
          workspaceId: ctx.admin.workspaceId,
          scopes,
          environment: form.environment as 'live' | 'test',
          days: Number(form.days),
          name: form.name,
          createdBy: ctx.actor,
          allowedIps: [form.allowedIps],
          now: services.clock(),
          maxKeys: services.config.maxKeys,
        });
        // The full key is in this response only (sent with Cache-Control: no-store), never stored.
        return sendHtml(reply, await renderPage(ctx, { created, notice: `Key ${created.key_id} created.` }), 201);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const param = typeof err.extra.param === 'string' ? err.extra.param : '_form';
        errors[param] =
          err.code === 'limit_reached'
            ? `Your plan allows ${services.config.maxKeys} valid keys and they are all in use. Revoke a key you no longer need, then create this one.`
            : err.message;
      }
    }
    return sendHtml(reply, await renderPage(ctx, { form, errors }), 400);
  });

  scope.get('/keys/:keyId/revoke', async (request, reply) => {
    const ctx = pageContext(services, request);
    const key = await findKey(ctx, (request.params as { keyId: string }).keyId);
    const body =
      key.status === 'revoked'
        ? html`<div class="card"><p>Key <code>${key.key_id}</code> (${key.name}) was already revoked ${formatTime(key.revoked_at)}.</p><p><a class="button" href="/console/keys">Back to API keys</a></p></div>`
        : html`<div class="card stack">
<p>You are about to revoke key <code>${key.key_id}</code>, <strong>${key.name}</strong> (${key.scopes.join(', ')}).</p>
<p class="warning">Every system using it gets <strong>401 Unauthorized</strong> from its next request. This cannot be undone: to restore access, create a new key and give it to them.</p>
<form method="post" action="/console/keys/${key.key_id}/revoke" class="actions">
  ${csrfField(ctx)}
  <button type="submit" class="button danger">Revoke key ${key.key_id}</button>
  <a class="button" href="/console/keys">Cancel</a>
</form>
</div>`;
    return sendHtml(reply, layout(ctx, { title: 'Revoke API key', nav: 'keys', body }));
  });

  scope.post('/keys/:keyId/revoke', async (request, reply) => {
    const ctx = pageContext(services, request);
    const key = await findKey(ctx, (request.params as { keyId: string }).keyId);
    await revokeKey(services.database.db, ctx.admin.workspaceId, key.key_id, services.clock(), ctx.actor);
    return reply.redirect(`/console/keys?revoked=${key.key_id}`, 303);
  });

  scope.get('/keys/:keyId/roll', async (request, reply) => {
    const ctx = pageContext(services, request);
    const key = await findKey(ctx, (request.params as { keyId: string }).keyId);
    return sendHtml(reply, rollPage(ctx, key));
  });

  scope.post('/keys/:keyId/roll', async (request, reply) => {
    const ctx = pageContext(services, request);
    const key = await findKey(ctx, (request.params as { keyId: string }).keyId);
    const grace = formValue(request.body, 'grace');
    try {
      const { successor, rolled } = await rollKey(services.database, {
        workspaceId: ctx.admin.workspaceId,
        keyId: key.key_id,
        grace,
        actor: ctx.actor,
        now: services.clock(),
        maxKeys: services.config.maxKeys,
      });
      const when = grace === '0' ? 'now revoked' : `revoked ${rolled.revoked_at?.slice(0, 16).replace('T', ' ')} UTC; both work until then`;
      // The full key is in this response only (sent with Cache-Control: no-store), never stored.
      return sendHtml(
        reply,
        await renderPage(ctx, {
          created: successor,
          notice: `Key ${key.key_id} rolled: its successor is ${successor.key_id}; the old key is ${when}.`,
        }),
        201,
      );
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendHtml(reply, rollPage(ctx, key, err.message), 400);
    }
  });

  scope.get('/keys/:keyId/allowlist', async (request, reply) => {
    const ctx = pageContext(services, request);
    const key = await findKey(ctx, (request.params as { keyId: string }).keyId);
    return sendHtml(reply, allowlistPage(ctx, key, (key.allowed_ips ?? []).join(', ')));
  });

  scope.post('/keys/:keyId/allowlist', async (request, reply) => {
    const ctx = pageContext(services, request);
    const key = await findKey(ctx, (request.params as { keyId: string }).keyId);
    const value = formValue(request.body, 'allowed_ips').trim();
    try {
      const updated = await setAllowedIps(services.database.db, {
        workspaceId: ctx.admin.workspaceId,
        keyId: key.key_id,
        allowedIps: [value],
        actor: ctx.actor,
        now: services.clock(),
      });
      return reply.redirect(`/console/keys?allowlist=${updated.key_id}`, 303);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return sendHtml(reply, allowlistPage(ctx, key, value, { allowed_ips: err.message }), 400);
    }
  });
}

function rollPage(ctx: PageContext, key: KeySummary, error?: string): Html {
  const body =
    key.status !== 'valid' || key.revoked_at !== null
      ? html`<div class="card"><p>Key <code>${key.key_id}</code> (${key.name}) cannot be rolled: it is ${key.status === 'valid' ? html`already rolled and is revoked ${formatTime(key.revoked_at)}` : key.status}. Create a new key instead.</p><p><a class="button" href="/console/keys">Back to API keys</a></p></div>`
      : html`<div class="card stack">
<p>Rolling key <code>${key.key_id}</code>, <strong>${key.name}</strong> (${key.scopes.join(', ')}), creates its successor with the same name, scopes and IP allowlist, and shows its secret once. Deploy the new key, then let the old one go.</p>
${error ? html`<p class="error form-error" role="alert">${error}</p>` : ''}
<form method="post" action="/console/keys/${key.key_id}/roll" class="stack">
  ${csrfField(ctx)}
  <fieldset class="field">
    <legend>When is the old key revoked?</legend>
    <p class="hint">Until then both keys work, so the systems using it can switch without an outage.</p>
    <div class="radios">
      ${Object.keys(ROLL_GRACES).map(
        (g) =>
          html`<label class="check"><input type="radio" name="grace" value="${g}"${g === '24h' ? html` checked` : ''}> <span>${GRACE_LABELS[g] ?? g}</span></label>`,
      )}
    </div>
  </fieldset>
  <div class="actions">
    <button type="submit" class="button primary">Roll key ${key.key_id}</button>
    <a class="button" href="/console/keys">Cancel</a>
  </div>
</form>
</div>`;
  return layout(ctx, { title: 'Roll API key', nav: 'keys', body });
}

function allowlistPage(ctx: PageContext, key: KeySummary, value: string, errors?: FieldErrors): Html {
  const body = html`<div class="card stack">
<p>Key <code>${key.key_id}</code>, <strong>${key.name}</strong>. A change applies from the next request: a request from elsewhere gets <strong>403 ip_not_allowed</strong>.</p>
<form method="post" action="/console/keys/${key.key_id}/allowlist" class="stack" novalidate>
  ${csrfField(ctx)}
  ${allowlistField(value, errors)}
  <div class="actions">
    <button type="submit" class="button primary">Save allowlist</button>
    <a class="button" href="/console/keys">Cancel</a>
  </div>
</form>
</div>`;
  return layout(ctx, { title: 'IP allowlist of an API key', nav: 'keys', body });
}
