/**
 * The schema's history: one file per migration in ./migrations/, named `NNNN_what_it_does.ts` so
 * the names sort in the order they were written (a new one takes the highest number here plus
 * one). Each file exports `up(db, dialect)`. Kysely applies pending ones in name order, and refuses to start when a new
 * migration sorts before one already applied (a branch merged late must take a new number).
 */
import { readdirSync } from 'node:fs';
import { type Kysely, type Migration, Migrator } from '#kysely';
import type { Database, Dialect } from './database.js';

const FOLDER = new URL('./migrations/', import.meta.url);

/** `0016_imports.ts` in the sources, `0016_imports.js` when built; helpers have no number. */
const MIGRATION_FILE = /^(\d{4}_[a-z0-9_]+)\.(?:ts|js)$/;

interface MigrationFile {
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

/** The migration files of ./migrations/, by name, in the order they apply. */
export function migrationFiles(): { name: string; file: string }[] {
  return readdirSync(FOLDER)
    .flatMap((file) => {
      const match = MIGRATION_FILE.exec(file);
      return match?.[1] ? [{ name: match[1], file }] : [];
    })
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Every migration, each bound to the dialect it runs on. */
export async function loadMigrations(dialect: Dialect): Promise<Record<string, Migration>> {
  const migrations: Record<string, Migration> = {};
  for (const { name, file } of migrationFiles()) {
    const module = (await import(new URL(file, FOLDER).href)) as MigrationFile;
    migrations[name] = { up: (db) => module.up(db, dialect) };
  }
  return migrations;
}

/**
 * Applies pending migrations (all of ./migrations/, or the given set in a test). Safe to run from
 * several processes at once: Kysely takes a lock.
 */
export async function migrate(database: Database, migrations?: Record<string, Migration>): Promise<string[]> {
  if (!migrations && (await upToDate(database))) return [];
  const all = migrations ?? (await loadMigrations(database.dialect));
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => all } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Whether the database has had exactly the migrations of ./migrations/. Every command and process
 * migrates first, and on a database already up to date this one read replaces loading every
 * migration file and running Kysely's Migrator (its tables, its lock, its reads): about a fifth
 * of a `wsops key create` (ADR 37). Anything else (a new database, a pending or an unknown
 * migration) goes through the Migrator, which applies or refuses as before.
 */
async function upToDate(database: Database): Promise<boolean> {
  let applied: string[];
  try {
    applied = (await database.engine.readCommitted<{ name: string }>('SELECT name FROM kysely_migration')).map((r) => r.name).sort();
  } catch {
    return false; // no migration table yet
  }
  const files = migrationFiles();
  return applied.length === files.length && files.every((f, i) => f.name === applied[i]);
}

/** Which migrations this database has had and which it still needs (`wsops status`); changes nothing. */
export async function migrationStatus(database: Database): Promise<{ applied: string[]; pending: string[] }> {
  const migrations = await loadMigrations(database.dialect);
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
  const all = await migrator.getMigrations();
  return {
    applied: all.filter((m) => m.executedAt !== undefined).map((m) => m.name),
    pending: all.filter((m) => m.executedAt === undefined).map((m) => m.name),
  };
}
