/**
 * The people SCIM sees: every person of the workspace (people written by the system of record
 * or the seed too, so an identity provider can match and link them by userName), less those a
 * SCIM DELETE kept as INACTIVE because other records name them.
 */
import type { Kysely } from '#kysely';
import { MAX_SEARCH_WORDS } from '../read/list-query.js';
import type { PageReader } from '../read/pages.js';
import { people } from '../registers/catalogue.js';
import type { Database } from '../store/database.js';
import type { DB } from '../store/schema.js';
import { searchWords } from '../store/search-text.js';
import type { RecordObject } from '../writes/records.js';
import type { ScimLink } from './users.js';

/** What this file takes of the services built at start (services.ts). */
export interface DirectoryServices {
  database: Database;
  pages: PageReader;
}

export interface ScimPerson {
  person: RecordObject;
  link: ScimLink | undefined;
  /** Set when a SCIM DELETE kept this person: SCIM no longer sees it. */
  deletedAt: string | null;
}

async function read(db: Kysely<DB>, workspaceId: string, id?: string): Promise<ScimPerson[]> {
  let q = db
    .selectFrom('records as r')
    .leftJoin('scim_people as s', (j) => j.onRef('s.workspace_id', '=', 'r.workspace_id').onRef('s.person_id', '=', 'r.id'))
    .select(['r.id', 'r.doc', 's.external_id', 's.employee_number', 's.deleted_at', 's.person_id'])
    .where('r.workspace_id', '=', workspaceId)
    .where('r.register', '=', 'people');
  if (id !== undefined) q = q.where('r.id', '=', id);
  const rows = await q.orderBy('r.id').execute();
  return rows.map((r) => ({
    person: JSON.parse(r.doc) as RecordObject,
    link: r.person_id ? { external_id: r.external_id, employee_number: r.employee_number } : undefined,
    deletedAt: r.deleted_at ?? null,
  }));
}

/**
 * Every person of the workspace, in id order (the paging order of a list). SCIM traffic is one
 * identity provider's sync; a filter is evaluated over these in memory (docs/scim.md, limits).
 */
export async function allPeople(db: Kysely<DB>, workspaceId: string): Promise<ScimPerson[]> {
  return read(db, workspaceId);
}

/** Candidates the search index can give at once; more, and the whole register is read instead. */
const CANDIDATES = 1000;

/**
 * The people whose work email may be this address, found through the register's search index
 * (the address's words, as word prefixes, over display_name and work_email): a superset of the
 * exact match, which the filter then picks out. The usual identity provider lookup
 * (`userName eq "..."`) so reads a few documents instead of the whole register. Undefined when
 * the index cannot narrow it (no words, or too many candidates).
 */
export async function peopleByEmail(services: DirectoryServices, workspaceId: string, email: string): Promise<ScimPerson[] | undefined> {
  const words = searchWords(email).slice(0, MAX_SEARCH_WORDS);
  if (words.length === 0) return undefined;
  const page = await services.pages.queries.listPage({ workspaceId, register: people, filters: {}, searchWords: words, limit: CANDIDATES });
  if (page.hasMore) return undefined;
  const docs = Buffer.isBuffer(page.documents)
    ? (JSON.parse(`[${page.documents.toString('utf8')}]`) as RecordObject[])
    : page.documents.map((d) => JSON.parse(d) as RecordObject);
  if (docs.length === 0) return [];
  const links = await services.database.db
    .selectFrom('scim_people')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where(
      'person_id',
      'in',
      docs.map((d) => d.id as string),
    )
    .execute();
  const byId = new Map(links.map((l) => [l.person_id, l]));
  return docs
    .map((person) => {
      const l = byId.get(person.id as string);
      return {
        person,
        link: l ? { external_id: l.external_id, employee_number: l.employee_number } : undefined,
        deletedAt: l?.deleted_at ?? null,
      };
    })
    .sort((a, b) => ((a.person.id as string) < (b.person.id as string) ? -1 : 1));
}

export async function onePerson(db: Kysely<DB>, workspaceId: string, id: string): Promise<ScimPerson | undefined> {
  return (await read(db, workspaceId, id))[0];
}

/** Keeps what SCIM says beyond the register; `deletedAt` hides the person from SCIM. */
export async function saveLink(
  db: Kysely<DB>,
  workspaceId: string,
  personId: string,
  link: ScimLink,
  deletedAt: string | null,
): Promise<void> {
  const row = { workspace_id: workspaceId, person_id: personId, ...link, deleted_at: deletedAt };
  await db
    .insertInto('scim_people')
    .values(row)
    .onConflict((oc) => oc.columns(['workspace_id', 'person_id']).doUpdateSet({ ...link, deleted_at: deletedAt }))
    .execute();
}

export async function dropLink(db: Kysely<DB>, workspaceId: string, personId: string): Promise<void> {
  await db.deleteFrom('scim_people').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).execute();
}
