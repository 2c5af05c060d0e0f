/**
 * Reads what a workspace already holds into a Directory, so a bulk seed can refer to real
 * people, sites and vendors. Only a bounded sample is read: a bulk seed needs a pool to draw
 * from, not the whole organisation.
 */
import type { Database } from '../store/database.js';
import { SOFTWARE_VENDORS } from './catalog.js';
import { Directory } from './directory.js';
import { SITES, timezoneCurrency } from './places.js';

/** What this file takes of the services built at start (services.ts). */
export interface ExistingSeedServices {
  database: Database;
}

const POOL_LIMIT = 10_000;

type Doc = Record<string, unknown>;

async function docs(services: ExistingSeedServices, workspaceId: string, register: string, limit = POOL_LIMIT): Promise<Doc[]> {
  const rows = await services.database.db
    .selectFrom('records')
    .select('doc')
    .where('workspace_id', '=', workspaceId)
    .where('register', '=', register)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => JSON.parse(r.doc) as Doc);
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export async function countRecords(services: ExistingSeedServices, workspaceId: string, register?: string): Promise<number> {
  let query = services.database.db
    .selectFrom('records')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId);
  if (register) query = query.where('register', '=', register);
  const row = await query.executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function loadDirectory(services: ExistingSeedServices, workspaceId: string): Promise<Directory> {
  const dir = new Directory();
  const locations = await docs(services, workspaceId, 'locations');
  const byId = new Map(locations.map((l) => [str(l.id), l]));
  for (const l of locations) {
    const id = str(l.id);
    const name = str(l.name) ?? '';
    if (!id) continue;
    if (l.kind === 'SITE') {
      const timezone = str(l.timezone) ?? 'UTC';
      const template = SITES.find((s) => name.startsWith(s.city));
      dir.addSite({ id, city: name, timezone, currency: timezoneCurrency(timezone), phonePrefix: template?.phonePrefix ?? '+1 555' });
    } else if (l.kind === 'DEPARTMENT') {
      dir.departments.push({ id, name: name.replace(/ \(.*\)$/, ''), siteId: str(l.parent_id) ?? '' });
    }
  }
  for (const l of locations) {
    const id = str(l.id);
    if (!id || l.kind !== 'TEAM') continue;
    const department = byId.get(str(l.parent_id));
    const siteId = str(department?.parent_id);
    if (!department || !siteId) continue;
    dir.addTeam({
      id,
      name: str(l.name) ?? '',
      siteId,
      departmentId: str(department.id) ?? '',
      department: (str(department.name) ?? '').replace(/ \(.*\)$/, ''),
    });
  }
  // People who are the subject of a transition keep exactly what they hold.
  for (const t of await docs(services, workspaceId, 'transitions', 1_000_000)) {
    const personId = str(t.person_id);
    if (personId) dir.freeze(personId);
  }
  for (const p of await docs(services, workspaceId, 'people')) {
    const id = str(p.id);
    const siteId = str(p.location_id);
    if (!id || !siteId) continue;
    const teamId = str(p.team_id);
    dir.addPerson({
      id,
      displayName: str(p.display_name) ?? id,
      siteId,
      teamId,
      managerId: str(p.manager_id),
      active: p.status === 'ACTIVE',
      department: teamId ? (dir.team(teamId)?.department ?? null) : null,
    });
  }
  for (const v of await docs(services, workspaceId, 'vendors')) {
    const id = str(v.id);
    const name = str(v.name) ?? '';
    if (!id) continue;
    const software = v.category === 'SOFTWARE' ? SOFTWARE_VENDORS.find((s) => name.startsWith(s.name)) : undefined;
    dir.vendors.push({
      id,
      name,
      category: str(v.category) ?? 'OTHER',
      locationId: str(v.location_id),
      currency: str(v.currency) ?? 'USD',
      systemCategory: software?.system ?? null,
    });
  }
  return dir;
}

/** The email domain the workspace's people already use, so new people match them. */
export async function existingEmailDomain(services: ExistingSeedServices, workspaceId: string): Promise<string | undefined> {
  const [person] = await docs(services, workspaceId, 'people', 1);
  const email = str(person?.work_email);
  return email?.slice(email.indexOf('@') + 1);
}
