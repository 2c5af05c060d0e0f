/**
 * SCIM writes of Users, through the system of record's write path (src/writes/record-writes.ts):
 * the register's validation, references, updated_at and search index, and no webhook event (the
 * rule for direct writes). Each write is audited as the SCIM token's.
 */

import { recordAudit } from '../audit/audit.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { randomBase62 } from '../ids.js';
import type { PageReader } from '../read/pages.js';
import { people } from '../registers/catalogue.js';
import type { FieldProblem } from '../registers/record-input.js';
import type { Database } from '../store/database.js';
import { deleteOne, putRecord } from '../writes/record-writes.js';
import type { RecordObject } from '../writes/records.js';
import { allPeople, dropLink, onePerson, peopleByEmail, type ScimPerson, saveLink } from './directory.js';
import { invalidValue, notFound, ScimError } from './errors.js';
import type { ScimTokenEntry } from './tokens.js';
import { ATTRIBUTE_OF_POINTER, type UserContext, type UserWrite, userToPerson } from './users.js';

/** What this file takes of the services built at start (services.ts). */
export interface UserWritesServices {
  database: Database;
  pages: PageReader;
  clock: Clock;
}

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

async function audit(services: UserWritesServices, token: ScimTokenEntry, action: string, personId: string, detail: RecordObject = {}) {
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

/** Another person (SCIM sees it or not) whose work email is this userName, ignoring case. */
function holderOf(all: readonly ScimPerson[], userName: string, exceptId?: string): ScimPerson | undefined {
  const wanted = userName.toLowerCase();
  return all.find((p) => p.person.id !== exceptId && String(p.person.work_email).toLowerCase() === wanted);
}

/** The people who may hold this work email: the search index's candidates, else everyone. */
async function candidates(services: UserWritesServices, token: ScimTokenEntry, email: string): Promise<ScimPerson[]> {
  return (await peopleByEmail(services, token.workspaceId, email)) ?? (await allPeople(services.database.db, token.workspaceId));
}

function uniqueness(userName: string): ScimError {
  return new ScimError(
    409,
    `A person with userName ${userName.slice(0, 254)} already exists in this workspace; look it up with filter=userName eq "...".`,
    'uniqueness',
  );
}

async function store(services: UserWritesServices, token: ScimTokenEntry, id: string, w: UserWrite, deletedAt: string | null = null) {
  const result = await putRecord(services, token.workspaceId, people, id, { id, ...w.person }).catch(refusedWrite);
  await saveLink(services.database.db, token.workspaceId, id, w.link, deletedAt);
  return { person: JSON.parse(result.doc) as RecordObject, link: w.link, created: result.created };
}

/**
 * POST /Users. A userName held by a person a SCIM DELETE kept (still referenced) takes that
 * person back: the identity provider re-provisions someone who left and came back.
 */
export async function createUser(services: UserWritesServices, token: ScimTokenEntry, body: unknown) {
  const first = userToPerson(body, context(services, token));
  const all = await candidates(services, token, first.person.work_email as string);
  const holder = holderOf(all, first.person.work_email as string);
  if (holder && holder.deletedAt === null) throw uniqueness(first.person.work_email as string);
  const id = holder ? (holder.person.id as string) : `per_${randomBase62(20)}`;
  const w = holder ? userToPerson(body, context(services, token, holder.person)) : first;
  const saved = await store(services, token, id, w);
  await audit(services, token, holder ? 'record.scim_restored' : 'record.scim_created', id);
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

/** PUT /Users/{id}, and the end of a PATCH: the whole User as it should be. */
export async function replaceUser(
  services: UserWritesServices,
  token: ScimTokenEntry,
  id: string,
  body: unknown,
  action = 'record.scim_replaced',
  existing?: ScimPerson,
) {
  const found = existing ?? (await visible(services, token, id));
  const patch = action === 'record.scim_patched';
  const w = userToPerson(body, {
    ...context(services, token, found.person),
    currentLink: found.link,
    // A PATCH result is the whole User (a removed attribute is absent); a PUT body is what the provider maps.
    absentKeeps: !patch,
    unknownAs: patch ? 'invalidPath' : 'invalidSyntax',
  });
  const all = await candidates(services, token, w.person.work_email as string);
  if (holderOf(all, w.person.work_email as string, id)) throw uniqueness(w.person.work_email as string);
  const saved = await store(services, token, id, w);
  await audit(services, token, action, id);
  return saved;
}

/**
 * DELETE /Users/{id}: a person no other record names is deleted (it leaves /api/v1 as a
 * `wsops delete` would); a person others name (an asset's holder, an approver, someone's
 * manager) is kept as INACTIVE and SCIM no longer sees it: identity providers need the user gone,
 * the register needs its references whole. Either way the answer is 204.
 */
export async function deleteUser(services: UserWritesServices, token: ScimTokenEntry, id: string): Promise<'deleted' | 'deactivated'> {
  const found = await visible(services, token, id);
  try {
    await deleteOne(services, token.workspaceId, people, id);
    await dropLink(services.database.db, token.workspaceId, id);
    await audit(services, token, 'record.scim_deleted', id);
    return 'deleted';
  } catch (err) {
    // Other records still name the person (the write side's 409 referenced): keep it instead.
    if (!(err instanceof AppError) || err.code !== 'referenced') throw err;
  }
  const person: RecordObject = { ...found.person, status: 'INACTIVE' };
  for (const stamp of ['id', 'created_at', 'updated_at']) delete person[stamp];
  const link = found.link ?? { external_id: null, employee_number: null };
  await store(services, token, id, { person, link }, new Date(services.clock()).toISOString());
  await audit(services, token, 'record.scim_deactivated', id, { reason: 'referenced by other records; kept as INACTIVE' });
  return 'deactivated';
}
