/**
 * The management console at /console: server-rendered pages for workspace admins. One
 * encapsulated Fastify scope: its own security headers, cookies, form parsing, HTML errors.
 * Routes under `authed` require a session (and a valid CSRF token on every POST); the sign-in
 * pages and the static assets do not. The public API reads no cookie; this scope accepts no
 * API key.
 */
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';
import { registerAdminPages } from './pages/admins.js';
import { registerAlertPages } from './pages/alert-settings.js';
import { registerAssets } from './pages/assets.js';
import { registerAuditPage } from './pages/audit.js';
import { registerDataPages } from './pages/data.js';
import { registerDeliveryPages } from './pages/deliveries.js';
import { registerKeyPages } from './pages/keys.js';
import { registerModulePages } from './pages/modules.js';
import { registerOverviewPage } from './pages/overview.js';
import { registerPasskeyRoutes } from './pages/passkey-routes.js';
import { registerScimPages } from './pages/scim.js';
import { registerSecondFactorPages } from './pages/second-factor.js';
import { registerSecurityPages } from './pages/security.js';
import { registerSignInPages } from './pages/sign-in.js';
import { registerSsoPages } from './pages/sso.js';
import { registerSsoSettingsRoutes } from './pages/sso-settings-routes.js';
import { registerWebhookPages } from './pages/webhooks.js';
import { registerConsoleSecurity, requireCsrf, requireSession } from './session.js';

export const CONSOLE_PREFIX = '/console';

export function registerConsole(app: FastifyInstance, services: Services): void {
  app.register(
    async (scope) => {
      await registerConsoleSecurity(scope, services);
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
