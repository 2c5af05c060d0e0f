/**
 * SCIM writes of Users, through the system of record's write path (src/writes/record-writes.ts):
 * the register's validation, references, updated_at and search index, and no webhook event (the
 * rule for direct writes). Each write is audited as the SCIM token's.
 *
 * Every guarantee is the database's, so it holds across any number of API processes: the
 * person and what SCIM keeps beside it commit in one transaction; a userName is unique through
 * scim_people's unique index (a second holder rolls its whole write back: 409 uniqueness); and a
 * write that read the User first commits only if the User is still as read (the person's ETag and
 * its SCIM link, checked under the person's row lock), else it reads again and reapplies (no lost
 * update between two PATCHes).
 */

import type { Kysely } from '#kysely';
import { type AuditAction, recordAudit } from '../audit/audit.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import { people } from '../registers/catalogue.js';
import type { FieldProblem } from '../registers/record-input.js';
import type { Database } from '../store/database.js';
import type { DB } from '../store/schema.js';
import { etagOf } from '../writes/record-changes.js';
import { deleteOne, type Preconditions, putRecord } from '../writes/record-writes.js';
import type { RecordObject } from '../writes/records.js';
import { onePerson, type ScimPerson, saveLink, uniqueness, userNameHolder } from './directory.js';
import { invalidValue, notFound } from './errors.js';
import type { ScimTokenEntry } from './tokens.js';
import { ATTRIBUTE_OF_POINTER, type ScimLink, type UserContext, type UserWrite, userToPerson } from './users.js';

/** What this file takes of the services built at start (services.ts). */
export interface UserWritesServices {
  database: Database;
  clock: Clock;
}

/** Reads and reapplications of one write whose User moved meanwhile, before it gives up (409). */
const ATTEMPTS = 8;

/** A refusal of the register, as SCIM: the attribute it concerns and why. */
function refusedWrite(err: unknown): never {
  if (err instanceof AppError && err.code === 'invalid_record') {
    const first = (err.extra.errors as FieldProblem[] | undefined)?.[0];
    if (first) {
      const attribute = ATTRIBUTE_OF_POINTER[first.pointer] ?? first.pointer;
      throw invalidValue(`${attribute} ${first.detail}`);
    }
  }
  throw err;
}

const moved = (err: unknown) => err instanceof AppError && err.code === 'precondition_failed';

/**
 * Runs a write that reads the User first, again while another write moved the User between its
 * read and its commit (the 412 of its precondition): each try reads afresh.
 */
async function untilSettled<T>(write: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (!moved(err)) throw err;
      if (attempt >= ATTEMPTS) {
        throw new AppError('conflict', 'The User kept changing while this write was applied; send it again.');
      }
    }
  }
}

async function audit(
  services: UserWritesServices,
  token: ScimTokenEntry,
  action: AuditAction,
  personId: string,
  detail: RecordObject = {},
) {
  await recordAudit(services.database.db, {
    workspaceId: token.workspaceId,
    at: new Date(services.clock()).toISOString(),
    actor: `scim:${token.tokenId}`,
    action,
    target: personId,
    detail: { register: 'people', ...detail },
  });
}

function context(services: UserWritesServices, token: ScimTokenEntry, current?: RecordObject): UserContext {
  return { current, locationId: token.locationId, today: new Date(services.clock()).toISOString().slice(0, 10) };
}

/** The link beside a person as stored now, read in the write's transaction (the person's row is locked). */
async function storedLink(db: Kysely<DB>, workspaceId: string, personId: string) {
  return db
    .selectFrom('scim_people')
    .select(['external_id', 'employee_number', 'user_name', 'deleted_at'])
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
}

const sameLink = (a: (ScimLink & { deleted_at: string | null }) | undefined, b: ScimPerson | undefined): boolean =>
  a === undefined
    ? b?.link === undefined
    : b?.link !== undefined &&
      a.external_id === b.link.external_id &&
      a.employee_number === b.link.employee_number &&
      a.user_name === b.link.user_name &&
      a.deleted_at === b.deletedAt;

/**
 * Writes the person and its link in one transaction. `read`: the User as the caller read it
 * (undefined: a new person), which must still be stored as read, else 412 (untilSettled reads again).
 */
async function store(
  services: UserWritesServices,
  token: ScimTokenEntry,
  id: string,
  w: UserWrite,
  read: ScimPerson | undefined,
  deletedAt: string | null = null,
) {
  const ws = token.workspaceId;
  const precondition: Preconditions = read ? { ifMatch: etagOf(read.person.updated_at as string) } : { ifNoneMatch: '*' };
  const result = await putRecord(services, ws, people, id, { id, ...w.person }, precondition, async (db) => {
    if (read && !sameLink(await storedLink(db, ws, id), read)) throw new AppError('precondition_failed', 'The User moved on.');
    await saveLink(db, ws, id, w.link, deletedAt);
  }).catch(refusedWrite);
  return { person: JSON.parse(result.doc) as RecordObject, link: w.link, created: result.created };
}

/**
 * POST /Users. A userName held by a person a SCIM DELETE kept (still referenced) takes that
 * person back: the identity provider re-provisions someone who left and came back.
 */
export async function createUser(services: UserWritesServices, token: ScimTokenEntry, body: unknown) {
  const first = userToPerson(body, context(services, token));
  const userName = first.link.user_name as string;
  const saved = await untilSettled(async () => {
    const holder = await userNameHolder(services.database, token.workspaceId, userName.toLowerCase());
    if (holder && holder.deletedAt === null) throw uniqueness(userName);
    if (!holder) return store(services, token, `per_${randomBase62(20)}`, first, undefined);
    const w = userToPerson(body, context(services, token, holder.person));
    return store(services, token, holder.person.id as string, w, holder);
  });
  await audit(services, token, saved.created ? 'record.scim_created' : 'record.scim_restored', saved.person.id as string);
  return saved;
}

async function visible(services: UserWritesServices, token: ScimTokenEntry, id: string): Promise<ScimPerson> {
  const found = /^per_[A-Za-z0-9_-]{1,64}$/.test(id) ? await onePerson(services.database.db, token.workspaceId, id) : undefined;
  if (!found || found.deletedAt !== null) throw notFound(`No User ${id.slice(0, 80)} in this workspace.`);
  return found;
}

export async function readUser(services: UserWritesServices, token: ScimTokenEntry, id: string): Promise<ScimPerson> {
  return visible(services, token, id);
}

/** The whole User `body` written over `found` (a PUT, or the result of a PATCH). */
async function replaceFound(services: UserWritesServices, token: ScimTokenEntry, found: ScimPerson, body: unknown, patch: boolean) {
  const id = found.person.id as string;
  const w = userToPerson(body, {
    ...context(services, token, found.person),
    currentLink: found.link,
    // A PATCH result is the whole User (a removed attribute is absent); a PUT body is what the provider maps.
    absentKeeps: !patch,
    unknownAs: patch ? 'invalidPath' : 'invalidSyntax',
  });
  const userName = w.link.user_name as string;
  const holder = await userNameHolder(services.database, token.workspaceId, userName.toLowerCase());
  if (holder && holder.person.id !== id && holder.deletedAt === null) throw uniqueness(userName);
  return store(services, token, id, w, found);
}

/** PUT /Users/{id}: the whole User as it should be. */
export async function replaceUser(services: UserWritesServices, token: ScimTokenEntry, id: string, body: unknown) {
  const saved = await untilSettled(async () => replaceFound(services, token, await visible(services, token, id), body, false));
  await audit(services, token, 'record.scim_replaced', id);
  return saved;
}

/** PATCH /Users/{id}: `apply` turns the User as read into the User as it should be; applied again to a fresh read if the User moved. */
export async function patchUser(
  services: UserWritesServices,
  token: ScimTokenEntry,
  id: string,
  apply: (found: ScimPerson) => Record<string, unknown>,
) {
  const saved = await untilSettled(async () => {
    const found = await visible(services, token, id);
    return replaceFound(services, token, found, apply(found), true);
  });
  await audit(services, token, 'record.scim_patched', id);
  return saved;
}

/**
 * DELETE /Users/{id}: a person no other record names is deleted (it leaves /api/v1 as a
 * `wsops delete` would, and what SCIM kept beside it goes with it: migration 0031's trigger); a
 * person others name (an asset's holder, an approver, someone's manager) is kept as INACTIVE and
 * SCIM no longer sees it: identity providers need the user gone, the register needs its
 * references whole. Either way the answer is 204. The delete's referrer check and the writes that
 * name the person are serialised by row locks (ADR 43), so the choice holds under concurrency.
 */
export async function deleteUser(services: UserWritesServices, token: ScimTokenEntry, id: string): Promise<'deleted' | 'deactivated'> {
  const outcome = await untilSettled(async () => {
    const found = await visible(services, token, id);
    try {
      await deleteOne(services, token.workspaceId, people, id, { ifMatch: etagOf(found.person.updated_at as string) });
      return 'deleted' as const;
    } catch (err) {
      // Other records still name the person (the write side's 409 referenced): keep it instead.
      if (!(err instanceof AppError) || err.code !== 'referenced') throw err;
    }
    const person: RecordObject = { ...found.person, status: 'INACTIVE' };
    for (const stamp of ['id', 'created_at', 'updated_at']) delete person[stamp];
    const link = found.link ?? { external_id: null, employee_number: null, user_name: null };
    await store(services, token, id, { person, link }, found, new Date(services.clock()).toISOString());
    return 'deactivated' as const;
  });
  if (outcome === 'deleted') await audit(services, token, 'record.scim_deleted', id);
  else await audit(services, token, 'record.scim_deactivated', id, { reason: 'referenced by other records; kept as INACTIVE' });
  return outcome;
}
