/**
 * A text field of a record's stored JSON (`records.doc`) as SQL, and a prefix match on it, in
 * the exact form the expression indexes of migration 0037 name: a query written with these is
 * served by those indexes instead of reading every document of a register.
 */
import { type RawBuilder, sql } from '#kysely';

export interface DocFields {
  /** `<field of doc>`: the text field of `<alias>.doc` (null when absent or null). */
  docText(alias: string, field: string): RawBuilder<string | null>;
  /** `lower(<field of doc>)`: the field of `<alias>.doc`, lower-cased (ASCII on SQLite, Unicode on PostgreSQL). */
  lowerDocText(alias: string, field: string): RawBuilder<string | null>;
  /** `expr` starts with `prefix` (compared exactly), in the form an index on `expr` serves (LIKE and GLOB escape their own characters). */
  startsWith(expr: RawBuilder<unknown>, prefix: string): RawBuilder<boolean>;
  /** `expr` ends with `suffix` (compared exactly). */
  endsWith(expr: RawBuilder<unknown>, suffix: string): RawBuilder<boolean>;
  /** `expr` holds `part` (compared exactly). */
  contains(expr: RawBuilder<unknown>, part: string): RawBuilder<boolean>;
}

const FIELD = /^[a-z_]+$/;
function checked(alias: string, field: string): void {
  // Interpolated as SQL text: only names wsops itself declares ever reach here.
  if (!FIELD.test(alias) || !FIELD.test(field)) throw new Error(`not a column or field name: ${alias}.${field}`);
}

export const sqliteDocFields: DocFields = {
  docText(alias, field) {
    checked(alias, field);
    return sql.raw(`json_extract(${alias}.doc, '$.${field}')`);
  },
  lowerDocText(alias, field) {
    checked(alias, field);
    return sql.raw(`lower(json_extract(${alias}.doc, '$.${field}'))`);
  },
  // GLOB is case-sensitive and served by a BINARY index; its wildcards are escaped as one-character classes.
  startsWith: (expr, prefix) => sql`${expr} GLOB ${`${prefix.replace(/[*?[]/g, (c) => `[${c}]`)}*`}`,
  endsWith: (expr, suffix) => sql`substr(${expr}, ${-suffix.length}) = ${suffix}`,
  contains: (expr, part) => sql`instr(${expr}, ${part}) > 0`,
};

export const postgresDocFields: DocFields = {
  docText(alias, field) {
    checked(alias, field);
    return sql.raw(`((${alias}.doc)::json ->> '${field}')`);
  },
  lowerDocText(alias, field) {
    checked(alias, field);
    return sql.raw(`lower((${alias}.doc)::json ->> '${field}')`);
  },
  // Served by a text_pattern_ops index whatever the database's collation.
  startsWith: (expr, prefix) => sql`${expr} LIKE ${`${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`,
  endsWith: (expr, suffix) => sql`right(${expr}, ${suffix.length}::int) = ${suffix}`,
  // An escaped LIKE, which a pg_trgm index serves where migration 0045 could make one.
  contains: (expr, part) => sql`${expr} LIKE ${`%${part.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`,
};
