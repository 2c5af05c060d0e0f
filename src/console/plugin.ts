/**
 * The management console at /console: server-rendered pages for workspace admins. One
 * encapsulated Fastify scope: its own security headers, cookies, form parsing, HTML errors.
 * Routes under `authed` require a session (and a valid CSRF token on every POST); the sign-in
 * pages and the static assets do not. The public API reads no cookie; this scope accepts no
 * API key.
 */
import type { FastifyInstance } from 'fastify';
import { registerAlertPages } from '../alerts/console-pages.js';
import { registerAssets } from '../console-kit/assets.js';
import { KEYS_NAV, registerKeyPages } from '../keys/console-pages.js';
import { registerScimPages, SCIM_NAV } from '../scim/console-pages.js';
import type { Services } from '../services.js';
import { registerConsoleSecurity, requireCsrf, requireSession } from '../sign-in/console-session.js';
import { ADMINS_NAV, registerAdminPages } from '../sign-in/pages/admins.js';
import { registerPasskeyRoutes } from '../sign-in/pages/passkey-routes.js';
import { registerSecondFactorPages } from '../sign-in/pages/second-factor.js';
import { registerSecurityPages, SECURITY_NAV } from '../sign-in/pages/security.js';
import { registerSignInPages } from '../sign-in/pages/sign-in.js';
import { registerSsoPages } from '../sign-in/pages/sso.js';
import { registerSsoSettingsRoutes } from '../sign-in/pages/sso-settings-routes.js';
import { AUDIT_NAV, registerAuditPage } from './pages/audit.js';
import { DATA_NAV, registerDataPages } from './pages/data.js';
import { registerDeliveryPages } from './pages/deliveries.js';
import { MODULES_NAV, registerModulePages } from './pages/modules.js';
import { OVERVIEW_NAV, registerOverviewPage } from './pages/overview.js';
import { registerWebhookPages, WEBHOOKS_NAV } from './pages/webhooks.js';

export const CONSOLE_PREFIX = '/console';

/** The main navigation, in order: each entry is declared by its feature's pages. */
const NAV = [OVERVIEW_NAV, KEYS_NAV, SCIM_NAV, WEBHOOKS_NAV, AUDIT_NAV, MODULES_NAV, DATA_NAV, ADMINS_NAV, SECURITY_NAV] as const;

export function registerConsole(app: FastifyInstance, services: Services): void {
  app.register(
    async (scope) => {
      await registerConsoleSecurity(scope, services);
      // Read by every page's context (console-kit/context.ts); the same list for every request.
      scope.decorateRequest('consoleNav', { getter: () => NAV });
      registerAssets(scope);
      registerSignInPages(scope, services);
      registerSecondFactorPages(scope, services);
      registerSsoPages(scope, services);
      await scope.register(async (authed) => {
        authed.addHook('preHandler', requireSession(services));
        authed.addHook('preHandler', requireCsrf);
        registerOverviewPage(authed, services);
        registerKeyPages(authed, services);
        registerScimPages(authed, services);
        registerWebhookPages(authed, services);
        registerAlertPages(authed, services);
        registerDeliveryPages(authed, services);
        registerAuditPage(authed, services);
        registerModulePages(authed, services);
        registerDataPages(authed, services);
        registerAdminPages(authed, services);
        registerSecurityPages(authed, services);
        registerPasskeyRoutes(authed, services);
        registerSsoSettingsRoutes(authed, services);
      });
    },
    { prefix: CONSOLE_PREFIX },
  );
}
