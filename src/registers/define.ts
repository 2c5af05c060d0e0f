import { type Field, f, type JsonSchema } from './fields.js';

/** The read scopes of the public API, one per module. */
export const READ_SCOPES = [
  'vendors:read',
  'approvals:read',
  'systems:read',
  'learning:read',
  'handovers:read',
  'transitions:read',
  'assets:read',
  'workplace:read',
  'people:read',
  'locations:read',
  'tasks:read',
] as const;
export type ReadScope = (typeof READ_SCOPES)[number];

/** Write scopes of other APIs that a key may hold; never accepted by webhook endpoints. */
export const WRITE_SCOPES = ['kpi:record'] as const;
export const ALL_SCOPES: readonly string[] = [...READ_SCOPES, ...WRITE_SCOPES];

export const ALWAYS_INSTALLED = ['people', 'locations', 'tasks'] as const;
export const OPTIONAL_MODULES = ['vendors', 'approvals', 'systems', 'learning', 'handovers', 'transitions', 'assets', 'workplace'] as const;
export const MODULES: readonly string[] = [...ALWAYS_INSTALLED, ...OPTIONAL_MODULES];
export type Module = (typeof ALWAYS_INSTALLED)[number] | (typeof OPTIONAL_MODULES)[number];

/** Filters are stored as indexed columns of the same name in the records table. */
export const FILTER_COLUMNS = ['location_id', 'status', 'category', 'record_type'] as const;
export type FilterName = (typeof FILTER_COLUMNS)[number];

export interface RegisterInput {
  /** The list path's last segment: `/api/v1/<path>`. Also the CLI's REGISTER name. */
  path: string;
  /** Singular resource name, used in OpenAPI schema names. */
  resource: string;
  /** Human description for the OpenAPI document. */
  description: string;
  idPrefix: string;
  scope: ReadScope;
  module: Module;
  fields: Record<string, Field>;
  filters: readonly FilterName[];
  /** Fields covered by `search`; empty when the register does not support text search. */
  search: readonly string[];
  /** Fields computed from others (never written directly), and how. */
  derived?: Readonly<Record<string, (record: Readonly<Record<string, unknown>>) => unknown>>;
}

export interface Register extends RegisterInput {
  /** camelCase name used by the SDK (`purchaseRequests`). */
  sdkName: string;
  /** Every field including the common ones, in response order. */
  allFields: Readonly<Record<string, Field>>;
  /** JSON Schema of one record (an allow-list: additionalProperties false). */
  recordSchema(): JsonSchema;
  /** Returns the record with its derived fields recomputed. */
  withDerived<T extends Record<string, unknown>>(record: T): T;
}

export function defineRegister(input: RegisterInput): Register {
  for (const filter of input.filters) {
    if (!(filter in input.fields)) throw new Error(`${input.path}: filter ${filter} is not a field`);
  }
  for (const s of input.search) {
    if (!(s in input.fields)) throw new Error(`${input.path}: search field ${s} is not a field`);
  }
  const allFields: Record<string, Field> = {
    id: f.id(input.idPrefix).describe('Identifier of the record.'),
    ...input.fields,
    created_at: f.timestamp().describe('When the record was created.'),
    updated_at: f.timestamp().describe('When the record was last written (stamped at write time). `updated_since` compares against it.'),
  };
  const sdkName = input.path.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  return {
    ...input,
    sdkName,
    allFields,
    withDerived(record) {
      if (!input.derived) return record;
      const out: Record<string, unknown> = { ...record };
      for (const [name, compute] of Object.entries(input.derived)) out[name] = compute(out);
      return out as typeof record;
    },
    recordSchema() {
      return {
        type: 'object',
        description: input.description,
        additionalProperties: false,
        required: Object.keys(allFields),
        properties: Object.fromEntries(Object.entries(allFields).map(([k, v]) => [k, v.schema()])),
      };
    },
  };
}
