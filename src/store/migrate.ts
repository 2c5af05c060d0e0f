/**
 * The schema's history: one file per migration in ./migrations/, named `NNNN_what_it_does.ts` so
 * the names sort in the order they were written (a new one takes the highest number here plus
 * one). Each file exports `up(db, dialect)`. Kysely applies pending ones in name order, and refuses to start when a new
 * migration sorts before one already applied (a branch merged late must take a new number).
 */
import { readdirSync } from 'node:fs';
import { type Kysely, type Migration, Migrator } from 'kysely';
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
  const all = migrations ?? (await loadMigrations(database.dialect));
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => all } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
