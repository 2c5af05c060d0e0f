/** The registers the mirror can copy: the SDK's generated list (from the OpenAPI document). */
import { REGISTERS } from '../generated/registers.js';

export type ColumnKind = 'text' | 'integer' | 'number' | 'boolean' | 'json';

export interface RegisterDescriptor {
  path: string;
  property: string;
  scope: string;
  columns: Readonly<Record<string, ColumnKind>>;
}

export const MIRROR_REGISTERS: readonly RegisterDescriptor[] = REGISTERS;

/** `--registers assets,purchase-requests` (paths or camelCase names); all when empty. */
export function selectRegisters(names: readonly string[]): RegisterDescriptor[] {
  if (names.length === 0) return [...MIRROR_REGISTERS];
  return names.map((name) => {
    const found = MIRROR_REGISTERS.find((r) => r.path === name || r.property === name);
    if (!found) throw new Error(`unknown register "${name}"; registers are: ${MIRROR_REGISTERS.map((r) => r.path).join(', ')}`);
    return found;
  });
}
