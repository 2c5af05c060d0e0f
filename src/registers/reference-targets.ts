import { registerByPath, registerByPrefix } from './catalogue.js';
import type { Register } from './define.js';
import { referencesOf } from './record-input.js';

const isRegisterPrefix = (prefix: string) => registerByPrefix(prefix) !== undefined;

/** The distinct ids a record names by its declared reference fields (not its own), as a JSON array. */
export function targetsOf(register: Register, record: Record<string, unknown>): string {
  return targetsJson(referencesOf(register, record, isRegisterPrefix), record.id as string);
}

/** The distinct ids of `refs` but `self`, sorted, as a JSON array (the one- and no-reference cases without a Set). */
export function targetsJson(refs: readonly { id: string }[], self: string): string {
  if (refs.length === 0) return '[]';
  if (refs.length === 1) return refs[0]?.id === self ? '[]' : JSON.stringify([refs[0]?.id]);
  return JSON.stringify([...new Set(refs.map((r) => r.id).filter((id) => id !== self))].sort());
}

/** `refs` of a stored row (register path and JSON), for the migration that adds the column. */
export function referenceTargets(registerPath: string, doc: string): string {
  const register = registerByPath(registerPath);
  return register ? targetsOf(register, JSON.parse(doc) as Record<string, unknown>) : '[]';
}
