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

/**
 * What follows an id's prefix and its `_`: the source system's own identifier, so a system of
 * record needs no lookup table (a UUID maps one to one). Letters, digits, `-` and `_`; at most
 * 64 characters. Every id in a path, filter or body is checked against this before any query.
 */
export const ID_PATTERN_BODY = '[A-Za-z0-9_-]{1,64}';
/** The longest id of any register: a prefix of at most 4 letters, `_`, and the body. */
export const MAX_ID_LENGTH = 4 + 1 + 64;
/** The id rule in words, for every refusal of an id: `per_ followed by 1 to 64 letters, digits, - or _`. */
export function idRule(prefix: string): string {
  return `${prefix}_ followed by 1 to 64 letters, digits, - or _`;
}

const ID_PATTERNS = new Map<string, RegExp>();
/** `^<prefix>_<ID_PATTERN_BODY>$`, the shape every id of a register has (compiled once per prefix). */
export function idPattern(prefix: string): RegExp {
  let pattern = ID_PATTERNS.get(prefix);
  if (!pattern) {
    pattern = new RegExp(`^${prefix}_${ID_PATTERN_BODY}$`);
    ID_PATTERNS.set(prefix, pattern);
  }
  return pattern;
}
/** Bounds of written values: a short text (a name, a title) and a long one (a description, notes). */
export const MAX_STRING_LENGTH = 1000;
export const MAX_TEXT_LENGTH = 10_000;
/** At most this many items in a nested list or id list of one record. */
export const MAX_LIST_ITEMS = 1000;

export const f = {
  string: () => make('string', { type: 'string', maxLength: MAX_STRING_LENGTH }, false),
  /** A long text: a description or notes. */
  text: () => make('string', { type: 'string', maxLength: MAX_TEXT_LENGTH }, false),
  email: () => make('string', { type: 'string', format: 'email', maxLength: 254 }, false),
  enum: (values: readonly string[]) => make('enum', { type: 'string', enum: [...values] }, false, { values }),
  id: (ref: string) => make('id', { type: 'string', pattern: `^${ref}_${ID_PATTERN_BODY}$` }, false, { ref }),
  ids: (ref: string) =>
    make('ids', { type: 'array', maxItems: MAX_LIST_ITEMS, items: { type: 'string', pattern: `^${ref}_${ID_PATTERN_BODY}$` } }, false, {
      ref,
    }),
  date: () => make('date', { type: 'string', format: 'date' }, false),
  timestamp: () => make('timestamp', { type: 'string', format: 'date-time' }, false),
  // Bounded to what a JSON number carries exactly (2^53 - 1), so no value is silently rounded.
  integer: (minimum?: number) =>
    make(
      'integer',
      minimum === undefined
        ? { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }
        : { type: 'integer', minimum, maximum: Number.MAX_SAFE_INTEGER },
      false,
    ),
  boolean: () => make('boolean', { type: 'boolean' }, false),
  /** An IANA time zone name (checked against the runtime's list when written). */
  timezone: () => make('timezone', { type: 'string', maxLength: 64 }, false),
  currency: () => make('currency', { type: 'string', pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code.' }, false),
  list: (of: Record<string, Field>) => {
    const itemSchema = {
      type: 'object',
      additionalProperties: false,
      required: Object.keys(of),
      properties: Object.fromEntries(Object.entries(of).map(([k, v]) => [k, v.schema()])),
    };
    return make('list', { type: 'array', maxItems: MAX_LIST_ITEMS, items: itemSchema }, false, { of });
  },
};
