/**
 * The light in-memory picture of the organisation that generators draw references from: sites,
 * teams, people and vendors as ids plus the few attributes other records depend on (a person's
 * site, manager, whether they are active). Nothing heavier is kept, so even a large seed holds
 * only a few strings per person.
 */
import type { SystemCategory } from './catalog.js';
import type { Random } from './random.js';

export interface SiteRef {
  id: string;
  city: string;
  timezone: string;
  currency: string;
  phonePrefix: string;
}

export interface DepartmentRef {
  id: string;
  name: string;
  siteId: string;
}

export interface TeamRef {
  id: string;
  name: string;
  siteId: string;
  departmentId: string;
  department: string;
}

export interface PersonRef {
  id: string;
  displayName: string;
  siteId: string;
  teamId: string | null;
  managerId: string | null;
  active: boolean;
  department: string | null;
}

export interface VendorRef {
  id: string;
  name: string;
  category: string;
  locationId: string | null;
  currency: string;
  /** For software vendors: the kind of system they sell. */
  systemCategory: SystemCategory | null;
}

export interface Holdings {
  assets: string[];
  systems: string[];
}

export class Directory {
  readonly sites: SiteRef[] = [];
  readonly departments: DepartmentRef[] = [];
  readonly teams: TeamRef[] = [];
  private readonly teamsById = new Map<string, TeamRef>();
  readonly people: PersonRef[] = [];
  /** Active people: requesters, approvers, owners, recipients. */
  readonly active: PersonRef[] = [];
  /** Active people who may be given assets or system access (see `freeze`). */
  readonly assignable: PersonRef[] = [];
  readonly vendors: VendorRef[] = [];
  private readonly peopleById = new Map<string, PersonRef>();
  private readonly sitesById = new Map<string, SiteRef>();
  private readonly activeBySite = new Map<string, PersonRef[]>();
  private readonly activeByTeam = new Map<string, PersonRef[]>();
  private readonly frozen = new Set<string>();
  private readonly tracked = new Map<string, Holdings>();
  private readonly wantAssets: string[] = [];
  private readonly wantSystems: string[] = [];

  addSite(site: SiteRef): void {
    this.sites.push(site);
    this.sitesById.set(site.id, site);
  }

  addTeam(team: TeamRef): void {
    this.teams.push(team);
    this.teamsById.set(team.id, team);
  }

  team(id: string): TeamRef | undefined {
    return this.teamsById.get(id);
  }

  site(id: string): SiteRef | undefined {
    return this.sitesById.get(id);
  }

  /**
   * Marks a person whose holdings must not change: the subject of a transition already stored
   * (a bulk seed added to an existing workspace), whose `held_*_ids` list what they hold now.
   */
  freeze(personId: string): void {
    this.frozen.add(personId);
  }

  addPerson(person: PersonRef): void {
    this.people.push(person);
    this.peopleById.set(person.id, person);
    if (!person.active) return;
    this.active.push(person);
    push(this.activeBySite, person.siteId, person);
    if (person.teamId) push(this.activeByTeam, person.teamId, person);
    if (!this.frozen.has(person.id)) this.assignable.push(person);
  }

  person(id: string): PersonRef | undefined {
    return this.peopleById.get(id);
  }

  /** An active person, usually from `siteId` (people mostly deal with colleagues on site). */
  pickActive(rng: Random, siteId?: string | null): PersonRef {
    const local = siteId ? this.activeBySite.get(siteId) : undefined;
    if (local && local.length > 0 && rng.chance(0.85)) return rng.pick(local);
    return rng.pick(this.active);
  }

  /** An active colleague of `person` (same team when possible, else same site), never `person`. */
  pickColleague(rng: Random, person: PersonRef): PersonRef {
    const team = person.teamId ? this.activeByTeam.get(person.teamId) : undefined;
    for (let attempt = 0; attempt < 6; attempt++) {
      const pool = team && team.length > 1 && attempt < 3 ? team : (this.activeBySite.get(person.siteId) ?? this.active);
      const other = rng.pick(pool.length > 1 ? pool : this.active);
      if (other.id !== person.id) return other;
    }
    return this.active.find((p) => p.id !== person.id) ?? person;
  }

  /** Someone who may receive an asset or access. */
  pickAssignable(rng: Random): PersonRef {
    return rng.pick(this.assignable.length > 0 ? this.assignable : this.active);
  }

  /**
   * Follows what a transition's subject holds, and asks for at least `assets` assets and
   * `systems` accesses to be given to them first, so the transition has something to list.
   */
  track(personId: string, assets: number, systems: number): void {
    this.tracked.set(personId, { assets: [], systems: [] });
    for (let i = 0; i < assets; i++) this.wantAssets.push(personId);
    for (let i = 0; i < systems; i++) this.wantSystems.push(personId);
  }

  /** The next holder of an assigned asset: a tracked subject still owed one, else anyone assignable. */
  nextAssetHolder(rng: Random): PersonRef {
    const wanted = this.wantAssets.shift();
    const person = wanted ? this.person(wanted) : undefined;
    return person ?? this.pickAssignable(rng);
  }

  /** Up to `count` tracked subjects still owed a system access (each asked once per system). */
  takeSystemWanters(count: number): PersonRef[] {
    const out: PersonRef[] = [];
    const skipped: string[] = [];
    while (out.length < count && this.wantSystems.length > 0) {
      const id = this.wantSystems.shift() as string;
      const person = this.person(id);
      if (!person) continue;
      if (out.some((p) => p.id === id)) skipped.push(id);
      else out.push(person);
    }
    this.wantSystems.unshift(...skipped);
    return out;
  }

  noteAsset(personId: string, assetId: string): void {
    this.tracked.get(personId)?.assets.push(assetId);
  }

  noteSystem(personId: string, systemId: string): void {
    this.tracked.get(personId)?.systems.push(systemId);
  }

  holdings(personId: string): Holdings {
    const t = this.tracked.get(personId);
    return { assets: t ? [...t.assets] : [], systems: t ? [...t.systems] : [] };
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
