import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';
import { createFtsTriggers, createRecordIndexes } from './record-indexes.js';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('modules', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('api_keys')
    .addColumn('key_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .addColumn('created_by', 'text')
    .execute();
  await db.schema.createIndex('api_keys_workspace').on('api_keys').columns(['workspace_id']).execute();
  await db.schema
    .createTable('audit_events')
    .addColumn('seq', dialect === 'sqlite' ? 'integer' : 'bigserial', (c) =>
      dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey(),
    )
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('target', 'text')
    .addColumn('detail', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_events_workspace').on('audit_events').columns(['workspace_id', 'seq']).execute();
  await db.schema
    .createTable('records')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('register', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('location_id', 'text')
    .addColumn('status', 'text')
    .addColumn('category', 'text')
    .addColumn('record_type', 'text')
    .addColumn('search_text', 'text', (c) => c.notNull())
    .addColumn('doc', 'text', (c) => c.notNull())
    .execute();
  await createRecordIndexes(db);
  if (dialect === 'sqlite') {
    // External-content FTS5 index over search_text, kept in step by triggers.
    await sql`CREATE VIRTUAL TABLE records_fts USING fts5(search_text, content='records', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`.execute(
      db,
    );
    await createFtsTriggers(db);
  } else {
    await sql`CREATE INDEX records_search ON records USING gin (to_tsvector('simple', search_text))`.execute(db);
  }
}
