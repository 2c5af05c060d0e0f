/**
 * The people SCIM sees: every person of the workspace (people written by the system of record
 * or the seed too, so an identity provider can match and link them by userName), less those a
 * SCIM DELETE kept as INACTIVE because other records name them. Every read is one bounded query
 * in the database: a page, a count, one person, the holder of one userName.
 */
import { type Kysely, type RawBuilder, sql } from '#kysely';
import type { Database } from '../store/database.js';
import type { DB } from '../store/schema.js';
import type { RecordObject } from '../writes/records.js';
import { ScimError } from './errors.js';
import type { CompiledFilter } from './filter.js';
import type { ScimLink } from './users.js';

export interface ScimPerson {
  person: RecordObject;
  link: ScimLink | undefined;
  /** Set when a SCIM DELETE kept this person: SCIM no longer sees it. */
  deletedAt: string | null;
}

interface LinkRow {
  person_id: string;
  external_id: string | null;
  employee_number: string | null;
  user_name: string | null;
  deleted_at: string | null;
}

const linkOf = (l: LinkRow | undefined): ScimLink | undefined =>
  l ? { external_id: l.external_id, employee_number: l.employee_number, user_name: l.user_name } : undefined;

async function linksOf(db: Kysely<DB>, workspaceId: string, ids: readonly string[]): Promise<Map<string, LinkRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('scim_people')
    .select(['person_id', 'external_id', 'employee_number', 'user_name', 'deleted_at'])
    .where('workspace_id', '=', workspaceId)
    .where('person_id', 'in', [...ids])
    .execute();
  return new Map(rows.map((l) => [l.person_id, l]));
}

async function withLinks(db: Kysely<DB>, workspaceId: string, rows: readonly { id: string; doc: string }[]): Promise<ScimPerson[]> {
  const links = await linksOf(
    db,
    workspaceId,
    rows.map((r) => r.id),
  );
  return rows.map((r) => {
    const l = links.get(r.id);
    return { person: JSON.parse(r.doc) as RecordObject, link: linkOf(l), deletedAt: l?.deleted_at ?? null };
  });
}

export async function onePerson(db: Kysely<DB>, workspaceId: string, id: string): Promise<ScimPerson | undefined> {
  const rows = await db
    .selectFrom('records')
    .select(['id', 'doc'])
    .where('workspace_id', '=', workspaceId)
    .where('register', '=', 'people')
    .where('id', '=', id)
    .execute();
  return (await withLinks(db, workspaceId, rows))[0];
}

/**
 * Who holds a userName (given lower-cased), SCIM sees them or not: the person SCIM wrote it for
 * (scim_people's unique key), else a person SCIM never named whose work email it is.
 */
export async function userNameHolder(database: Database, workspaceId: string, key: string): Promise<ScimPerson | undefined> {
  const db = database.db;
  const claimed = await db
    .selectFrom('scim_people')
    .select('person_id')
    .where('workspace_id', '=', workspaceId)
    .where('user_name_key', '=', key)
    .executeTakeFirst();
  if (claimed) return onePerson(db, workspaceId, claimed.person_id);
  const email = database.engine.lowerDocText('p', 'work_email');
  const { rows } = await sql<{ id: string; doc: string }>`SELECT p.id, p.doc FROM records p
    WHERE p.workspace_id = ${workspaceId} AND p.register = 'people' AND ${email} = ${key}
      AND NOT EXISTS (SELECT 1 FROM scim_people c WHERE c.workspace_id = p.workspace_id AND c.person_id = p.id AND c.user_name_key IS NOT NULL)
    ORDER BY p.id LIMIT 1`.execute(db);
  return (await withLinks(db, workspaceId, rows))[0];
}

/** The people's short rows: the fields a filter compares and a copy of their SCIM link (migration 0043). */
const PEOPLE = sql`scim_people_fields r`;

/**
 * One page of the Users a filter selects (in id order), and how many it selects in all. The
 * people are counted and paged in scim_people_fields (migration 0043: a short row per person,
 * the fields a filter compares), whose key is the workspace and id; only the page's documents are read.
 */
export async function listUsers(
  database: Database,
  workspaceId: string,
  filter: CompiledFilter | undefined,
  startIndex: number,
  count: number,
): Promise<{ total: number; page: ScimPerson[] }> {
  const db = database.db;
  const people = sql`r.workspace_id = ${workspaceId}`;
  // A person a SCIM DELETE kept is not seen.
  const visible = sql`${people} AND r.deleted_at IS NULL`;
  // Without a filter, the people's id index of records (narrower than the short rows) less the
  // few a DELETE kept, a set read once per statement.
  const unlinked = sql`r.workspace_id = ${workspaceId} AND r.register = 'people'
    AND r.id NOT IN (SELECT person_id FROM scim_people WHERE workspace_id = ${workspaceId} AND deleted_at IS NOT NULL)`;
  const matched = filter?.where({ workspaceId, fields: database.engine });
  const sliceRows = database.engine.scanSliceRows;
  // A paced read (a count of the whole directory) keeps to one backend at a time, as its scans do
  // (ADR 54): running its count and page at once would take both of a small server's cores from
  // the other workspaces. A list or an indexed filter reads both at once.
  const together = matched === undefined || filter?.indexed === true;
  const both = async (total: () => Promise<number>, ids: () => Promise<string[]>) => {
    if (!together) return { total: await total(), ids: await ids() };
    const [t, i] = await Promise.all([total(), ids()]);
    return { total: t, ids: i };
  };
  const { total, ids } =
    matched === undefined
      ? await both(
          () => visibleCount(database, workspaceId, true),
          () => pageIds(db, sql`(SELECT workspace_id, register, id, id AS person_id FROM records) r`, unlinked, startIndex, count),
        )
      : filter?.complement
        ? await both(
            // The negation of an equality: the people SCIM sees less the equality's few matches,
            // counted in its index; nearly every person matches, so a page walks few ids past its own.
            async () =>
              (await visibleCount(database, workspaceId, false)) -
              (await countOf(db, sql`${visible} AND ${filter.complement?.({ workspaceId, fields: database.engine })}`)),
            () => pageIds(db, PEOPLE, sql`${visible} AND ${matched}`, startIndex, count),
          )
        : filter?.indexed || sliceRows === null
          ? await both(
              () => countOf(db, sql`${visible} AND ${matched}`),
              () => pageIds(db, PEOPLE, sql`${visible} AND ${matched}`, startIndex, count),
            )
          : await scan(db, people, sql`${visible} AND ${matched}`, startIndex, count, sliceRows);
  if (ids.length === 0) return { total, page: [] };
  const [rows, links] = await Promise.all([
    db.selectFrom('records').select(['id', 'doc']).where('workspace_id', '=', workspaceId).where('id', 'in', ids).orderBy('id').execute(),
    linksOf(db, workspaceId, ids),
  ]);
  return {
    total,
    page: rows.map((r) => {
      const l = links.get(r.id);
      return { person: JSON.parse(r.doc) as RecordObject, link: linkOf(l), deletedAt: l?.deleted_at ?? null };
    }),
  };
}

async function countOf(db: Kysely<DB>, where: RawBuilder<unknown>): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${PEOPLE} WHERE ${where}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** The people SCIM sees, counted from the people's id index less the few a DELETE kept (no probe per person). */
async function visibleCount(database: Database, workspaceId: string, together: boolean): Promise<number> {
  const db = database.db;
  const all = () => peopleCount(db, workspaceId, database.engine.scanSliceRows);
  const kept = async () => {
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM scim_people
      WHERE workspace_id = ${workspaceId} AND deleted_at IS NOT NULL`.execute(db);
    return Number(rows[0]?.n ?? 0);
  };
  if (!together) return (await all()) - (await kept());
  const [n, k] = await Promise.all([all(), kept()]);
  return n - k;
}

/**
 * The workspace's people, counted in the people's id index. SQLite, whose reads hold the event
 * loop, counts a slice of ids at a time (index entries, so slices five times a scan's) with a turn
 * of the loop between: another workspace's request waits for a slice, not for the directory.
 */
async function peopleCount(db: Kysely<DB>, workspaceId: string, sliceRows: number | null): Promise<number> {
  if (sliceRows === null) {
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM records
      WHERE workspace_id = ${workspaceId} AND register = 'people'`.execute(db);
    return Number(rows[0]?.n ?? 0);
  }
  const slice = sliceRows * 5;
  let total = 0;
  for (let after = ''; ; ) {
    const { rows } = await sql<{ n: number | string; last: string | null }>`SELECT count(*) AS n, max(id) AS last FROM
      (SELECT id FROM records WHERE workspace_id = ${workspaceId} AND register = 'people' AND id > ${after} ORDER BY id LIMIT ${slice})`.execute(
      db,
    );
    const n = Number(rows[0]?.n ?? 0);
    total += n;
    if (n < slice || !rows[0]?.last) return total;
    after = rows[0].last;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A page's ids, in key order: a deep page skips index entries, not documents. */
async function pageIds(
  db: Kysely<DB>,
  from: RawBuilder<unknown>,
  where: RawBuilder<unknown>,
  startIndex: number,
  count: number,
): Promise<string[]> {
  if (count === 0) return [];
  const { rows } = await sql<{ id: string }>`SELECT r.person_id AS id FROM ${from} WHERE ${where}
    ORDER BY r.person_id LIMIT ${count} OFFSET ${startIndex - 1}`.execute(db);
  return rows.map((r) => r.id);
}

/**
 * A filter no index serves, tested on every person's row a slice of people at a time (the
 * engine's scanSliceRows) with a turn of the event loop between: each slice's matches are
 * counted in the database, and only the page's ids are read (a filter that selects everyone
 * must not bring every id into the process to count it).
 */
async function scan(
  db: Kysely<DB>,
  people: RawBuilder<unknown>,
  where: RawBuilder<unknown>,
  startIndex: number,
  count: number,
  sliceRows: number,
): Promise<{ total: number; ids: string[] }> {
  let total = 0;
  const ids: string[] = [];
  for (let after = ''; ; ) {
    // One statement a slice: its last id, how many people it holds, how many of them match.
    const { rows: counted } = await sql<{ last: string | null; n: number | string; matches: number | string | null }>`
      SELECT max(r.person_id) AS last, count(*) AS n, sum(CASE WHEN ${where} THEN 1 ELSE 0 END) AS matches
      FROM (SELECT * FROM ${PEOPLE} WHERE ${people} AND r.person_id > ${after} ORDER BY r.person_id LIMIT ${sliceRows}) r`.execute(db);
    const last = counted[0]?.last ?? null;
    if (last === null) return { total, ids };
    const matches = Number(counted[0]?.matches ?? 0);
    const skip = Math.max(0, startIndex - 1 - total);
    if (ids.length < count && matches > skip) {
      // The slice's rows by key, as counted: an index of the short rows would walk the workspace.
      const { rows } = await sql<{ id: string }>`SELECT r.person_id AS id
        FROM (SELECT * FROM ${PEOPLE} WHERE ${people} AND r.person_id > ${after} AND r.person_id <= ${last}) r
        WHERE ${where} ORDER BY r.person_id LIMIT ${count - ids.length} OFFSET ${skip}`.execute(db);
      ids.push(...rows.map((r) => r.id));
    }
    total += matches;
    if (Number(counted[0]?.n) < sliceRows) return { total, ids };
    after = last;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const isUniqueViolation = (err: unknown): boolean => {
  const e = err as { code?: unknown };
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
};

/** The 409 of a userName another person holds. */
export function uniqueness(userName: string): ScimError {
  return new ScimError(
    409,
    `A person with userName ${userName.slice(0, 254)} already exists in this workspace; look it up with filter=userName eq "...".`,
    'uniqueness',
  );
}

/**
 * Keeps what SCIM says beyond the register, in the transaction `db` of the person's write;
 * `deletedAt` hides the person from SCIM. The userName's key is unique per workspace: a second
 * holder fails here, and its transaction (the person's write with it) rolls back.
 */
export async function saveLink(
  db: Kysely<DB>,
  workspaceId: string,
  personId: string,
  link: ScimLink,
  deletedAt: string | null,
): Promise<void> {
  // A person a SCIM DELETE kept releases its userName: SCIM no longer sees it, so nothing could find the holder.
  const key = deletedAt === null ? (link.user_name?.toLowerCase() ?? null) : null;
  const values = { ...link, user_name_key: key, deleted_at: deletedAt };
  try {
    await db
      .insertInto('scim_people')
      .values({ workspace_id: workspaceId, person_id: personId, ...values })
      .onConflict((oc) => oc.columns(['workspace_id', 'person_id']).doUpdateSet(values))
      .execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw uniqueness(link.user_name ?? '');
    throw err;
  }
}

export async function dropLink(db: Kysely<DB>, workspaceId: string, personId: string): Promise<void> {
  await db.deleteFrom('scim_people').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).execute();
}
