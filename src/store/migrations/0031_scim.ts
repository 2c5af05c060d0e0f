import { type Kysely, sql } from '#kysely';
import type { Dialect } from '../database.js';

/**
 * SCIM provisioning: the workspace SCIM tokens (a credential of their own, never an API key) and
 * what SCIM says about a person that the people register has no field for (the identity
 * provider's externalId, the enterprise employeeNumber) or that a DELETE left behind (a person
 * other records still name is kept, INACTIVE, and hidden from SCIM).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('scim_tokens')
    .addColumn('token_id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('environment', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('location_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('scim_tokens_workspace').on('scim_tokens').columns(['workspace_id', 'created_at']).execute();
  await db.schema
    .createTable('scim_people')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('employee_number', 'text')
    .addColumn('deleted_at', 'text')
    .addPrimaryKeyConstraint('scim_people_pk', ['workspace_id', 'person_id'])
    .execute();
  // What SCIM keeps beside a person goes with the person, whoever deletes it (the system of
  // record, an import, wsops delete): a person written again under the same id starts with no
  // externalId and is not hidden by an old SCIM DELETE.
  if (dialect === 'sqlite') {
    await sql`CREATE TRIGGER records_scim_people_ad AFTER DELETE ON records WHEN old.register = 'people' BEGIN
      DELETE FROM scim_people WHERE workspace_id = old.workspace_id AND person_id = old.id; END`.execute(db);
  } else {
    await sql`CREATE FUNCTION records_scim_people_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM scim_people s USING old_rows o
          WHERE o.register = 'people' AND s.workspace_id = o.workspace_id AND s.person_id = o.id;
        RETURN NULL;
      END $$`.execute(db);
    await sql`CREATE TRIGGER records_scim_people_ad AFTER DELETE ON records REFERENCING OLD TABLE AS old_rows
      FOR EACH STATEMENT EXECUTE FUNCTION records_scim_people_deleted()`.execute(db);
  }
}
