/**
 * What each scope and module means in words, built from the register definitions (the same
 * source as the API and its OpenAPI document), so a new register shows up here by itself.
 */
import { ALL_SCOPES, ALWAYS_INSTALLED, MODULES, REGISTERS, type Register } from '../registers/catalogue.js';

export interface ScopeInfo {
  scope: string;
  /** One sentence: what a key or endpoint with this scope can read. */
  description: string;
  /** The module whose registers it reads (undefined for scopes of other APIs). */
  module: string | undefined;
  registers: readonly Register[];
}

function title(path: string): string {
  const words = path.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const OTHER_SCOPES: Record<string, string> = {
  'kpi:record': 'Record KPI values through the KPI API (a write scope of another API; it reads nothing here and webhooks refuse it).',
};

export const SCOPE_INFO: readonly ScopeInfo[] = ALL_SCOPES.map((scope) => {
  const registers = REGISTERS.filter((r) => r.scope === scope);
  const description =
    OTHER_SCOPES[scope] ??
    `Read ${registers.map((r) => `${title(r.path).toLowerCase()} (${r.description.replace(/\.$/, '').replace(/^A /, 'each ').replace(/^An /, 'each ')})`).join('; ')}.`;
  return { scope, description, module: registers[0]?.module, registers };
});

const byScope = new Map(SCOPE_INFO.map((s) => [s.scope, s]));

export function scopeInfo(scope: string): ScopeInfo | undefined {
  return byScope.get(scope);
}

export interface ModuleInfo {
  module: string;
  label: string;
  alwaysInstalled: boolean;
  registers: readonly Register[];
  scopes: readonly ScopeInfo[];
}

export const MODULE_INFO: readonly ModuleInfo[] = MODULES.map((module) => ({
  module,
  label: title(module),
  alwaysInstalled: (ALWAYS_INSTALLED as readonly string[]).includes(module),
  registers: REGISTERS.filter((r) => r.module === module),
  scopes: SCOPE_INFO.filter((s) => s.module === module),
}));

export { title as registerTitle };
