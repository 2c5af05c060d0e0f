/**
 * The schema's history (src/store/migrate.ts): one file per migration, numbered so the names sort,
 * applied in that order on both databases; a migration that sorts before one already applied is
 * refused; and the hand-written table types of src/store/schema.ts say exactly what the migrated
 * database holds, table by table and column by column.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import ts from 'typescript';
import { sql } from '#kysely';
import { type Database, openDatabase } from '../../src/store/database.js';
import { loadMigrations, migrate, migrationFiles } from '../../src/store/migrate.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';

/** schema.ts as data: table name → the column names its interface declares. */
function declaredSchema(): Map<string, string[]> {
  const path = new URL('../../src/store/schema.ts', import.meta.url);
  const file = ts.createSourceFile('schema.ts', readFileSync(path, 'utf8'), ts.ScriptTarget.Latest);
  const interfaces = new Map<string, string[]>();
  for (const statement of file.statements) {
    if (!ts.isInterfaceDeclaration(statement)) continue;
    interfaces.set(
      statement.name.text,
      statement.members.flatMap((m) => (m.name && ts.isIdentifier(m.name) ? [m.name.text] : [])),
    );
  }
  const tables = new Map<string, string[]>();
  const db = file.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'DB');
  assert.ok(db, 'schema.ts declares the DB interface');
  for (const member of db.members) {
    if (!ts.isPropertySignature(member) || !member.type || !ts.isTypeReferenceNode(member.type)) continue;
    const table = (member.name as ts.Identifier).text;
    const columns = interfaces.get((member.type.typeName as ts.Identifier).text);
    assert.ok(columns, `schema.ts: the interface of table ${table} exists`);
    tables.set(table, [...columns].sort());
  }
  return tables;
}

/** The migrated database's own tables and columns (search indexes and Kysely's bookkeeping aside). */
async function actualSchema(database: Database): Promise<Map<string, string[]>> {
  const rows =
    database.dialect === 'sqlite'
      ? await sql<{ table_name: string; column_name: string }>`
          SELECT m.name AS table_name, p.name AS column_name
          FROM sqlite_master m, pragma_table_info(m.name) p
          WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE 'records_fts%'`.execute(database.db)
      : await sql<{ table_name: string; column_name: string }>`
          SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'`.execute(database.db);
  const tables = new Map<string, string[]>();
  for (const { table_name, column_name } of rows.rows) {
    // auth_version is SQLite's stand-in for LISTEN/NOTIFY (auth-change-triggers.ts), read with raw SQL.
    if (table_name.startsWith('kysely_migration') || table_name === 'auth_version') continue;
    tables.set(table_name, [...(tables.get(table_name) ?? []), column_name]);
  }
  for (const [table, columns] of tables) tables.set(table, columns.sort());
  return tables;
}

describe('migrations: one file each, numbered so they sort', () => {
  it('every migration file is NNNN_name, and no two share a number', () => {
    const files = migrationFiles();
    assert.ok(files.length >= 13);
    const numbers = files.map((f) => f.name.slice(0, 4));
    assert.deepEqual(new Set(numbers).size, numbers.length, `a number is used twice: ${numbers.join(' ')}`);
    assert.deepEqual(
      files.map((f) => f.name),
      files.map((f) => f.name).sort(),
    );
  });
});

for (const dialect of DIALECTS) {
  describe(`migrations [${dialect}]`, () => {
    let test: TestDatabase;
    let database: Database;
    before(async () => {
      test = await createTestDatabase(dialect);
      database = openDatabase(test.url);
    });
    after(async () => {
      await database.close();
      await test.drop();
    });

    it('an empty database gets every migration in name order, and a second run applies nothing', async () => {
      const applied = await migrate(database);
      assert.deepEqual(
        applied,
        migrationFiles().map((f) => f.name),
      );
      assert.deepEqual(await migrate(database), []);
    });

    it('a new migration that sorts before one already applied is refused, and nothing is applied', async () => {
      const migrations = await loadMigrations(dialect);
      let ran = false;
      const late = {
        ...migrations,
        '0014_merged_late': {
          async up() {
            ran = true;
          },
        },
      };
      await assert.rejects(migrate(database, late), /must always have a name that comes alphabetically after the last executed migration/);
      assert.equal(ran, false);
    });

    it('schema.ts declares exactly the tables and columns the migrations create', async () => {
      assert.deepEqual(Object.fromEntries(await actualSchema(database)), Object.fromEntries(declaredSchema()));
    });
  });
}
