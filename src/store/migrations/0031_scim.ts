import type { Kysely } from 'kysely';

/**
 * SCIM provisioning: the workspace SCIM tokens (a credential of their own, never an API key) and
 * what SCIM says about a person that the people register has no field for (the identity
 * provider's externalId, the enterprise employeeNumber) or that a DELETE left behind (a person
 * other records still name is kept, INACTIVE, and hidden from SCIM).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
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
}
