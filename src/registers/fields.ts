/**
 * A tiny field vocabulary for register declarations. Each field knows its JSON Schema, so the
 * OpenAPI document, response shapes and the SDK's types all come from one declaration.
 */
export type JsonSchema = Record<string, unknown>;

export interface Field {
  readonly kind: string;
  readonly nullable: boolean;
  readonly description?: string;
  /** Enumeration values, for `enum` fields. */
  readonly values?: readonly string[];
  /** Id prefix of the referenced register, for `id` and `ids` fields. */
  readonly ref?: string;
  /** Sub-fields, for `list` fields. */
  readonly of?: Readonly<Record<string, Field>>;
  schema(): JsonSchema;
}

export interface FieldBuilder extends Field {
  nullable_(): FieldBuilder;
  describe(text: string): FieldBuilder;
}

function make(kind: string, base: JsonSchema, nullable: boolean, extra: Partial<Field> = {}, description?: string): FieldBuilder {
  const field: FieldBuilder = {
    kind,
    nullable,
    description,
    ...extra,
    schema(): JsonSchema {
      const s: JsonSchema = { ...base };
      if (nullable) s.type = [base.type as string, 'null'];
      if (nullable && base.enum) s.enum = [...(base.enum as string[]), null];
      if (description) s.description = description;
      return s;
    },
    nullable_() {
      return make(kind, base, true, extra, description);
    },
    describe(text: string) {
      return make(kind, base, nullable, extra, text);
    },
  };
  return field;
}

export const ID_PATTERN_BODY = '[A-Za-z0-9]{1,40}';

export const f = {
  string: () => make('string', { type: 'string' }, false),
  email: () => make('string', { type: 'string', format: 'email' }, false),
  enum: (values: readonly string[]) => make('enum', { type: 'string', enum: [...values] }, false, { values }),
  id: (ref: string) => make('id', { type: 'string', pattern: `^${ref}_${ID_PATTERN_BODY}$` }, false, { ref }),
  ids: (ref: string) =>
    make('ids', { type: 'array', items: { type: 'string', pattern: `^${ref}_${ID_PATTERN_BODY}$` } }, false, {
      ref,
    }),
  date: () => make('date', { type: 'string', format: 'date' }, false),
  timestamp: () => make('timestamp', { type: 'string', format: 'date-time' }, false),
  integer: (minimum?: number) => make('integer', minimum === undefined ? { type: 'integer' } : { type: 'integer', minimum }, false),
  boolean: () => make('boolean', { type: 'boolean' }, false),
  currency: () => make('string', { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code.' }, false),
  list: (of: Record<string, Field>) => {
    const itemSchema = {
      type: 'object',
      additionalProperties: false,
      required: Object.keys(of),
      properties: Object.fromEntries(Object.entries(of).map(([k, v]) => [k, v.schema()])),
    };
    return make('list', { type: 'array', items: itemSchema }, false, { of });
  },
};
