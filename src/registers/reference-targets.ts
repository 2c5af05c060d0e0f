import { registerByPath, registerByPrefix } from './catalogue.js';
import type { Register } from './define.js';
import { referencesOf } from './record-input.js';

const isRegisterPrefix = (prefix: string) => registerByPrefix(prefix) !== undefined;

/** The distinct ids a record names by its declared reference fields (not its own), as a JSON array. */
export function targetsOf(register: Register, record: Record<string, unknown>): string {
  const refs = referencesOf(register, record, isRegisterPrefix);
  if (refs.length === 0) return '[]';
  return JSON.stringify([...new Set(refs.map((r) => r.id).filter((id) => id !== record.id))].sort());
}

/** `refs` of a stored row (register path and JSON), for the migration that adds the column. */
export function referenceTargets(registerPath: string, doc: string): string {
  const register = registerByPath(registerPath);
  return register ? targetsOf(register, JSON.parse(doc) as Record<string, unknown>) : '[]';
}
