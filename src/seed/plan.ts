/**
 * How many records of each register a scale makes. Counts grow linearly with the scale, except
 * locations, which grow with its square root (an organisation ten times larger has more people
 * per team, not ten times the sites). Assets are exactly
 * `ASSETS_PER_SCALE * scale` (rounded); scales below 1 give the scale-1 picture.
 */
import { DEPARTMENTS } from './places.js';

export interface SeedCounts {
  sites: number;
  departmentsPerSite: number;
  teamsPerDepartment: number;
  people: number;
  vendors: number;
  purchaseRequests: number;
  systems: number;
  learningAssignments: number;
  handovers: number;
  transitions: number;
  assets: number;
  workplaceRecords: number;
}

/** Records per unit of scale. Scale 1 is the minimum: it is what the demo guarantees need. */
const PER_SCALE = {
  people: 70,
  vendors: 24,
  purchaseRequests: 30,
  systems: 16,
  learningAssignments: 60,
  handovers: 12,
  transitions: 8,
  assets: 80,
  workplaceRecords: 30,
} as const;

export const ASSETS_PER_SCALE = PER_SCALE.assets;

/** The scale whose seed makes `assets` assets (to size a benchmark by its largest register). */
export function scaleForAssets(assets: number): number {
  return assets / ASSETS_PER_SCALE;
}

export function countsForScale(scale: number): SeedCounts {
  const s = Math.max(1, scale);
  const log = Math.floor(Math.log2(s));
  const sites = Math.max(3, Math.round(3 * Math.sqrt(s)));
  const departmentsPerSite = Math.min(DEPARTMENTS.length, 3 + log);
  const teamsPerDepartment = 2 + Math.floor(log / 2);
  const managers = 1 + sites * departmentsPerSite * (1 + teamsPerDepartment);
  const count = (perScale: number) => Math.round(perScale * s);
  const transitions = count(PER_SCALE.transitions);
  return {
    sites,
    departmentsPerSite,
    teamsPerDepartment,
    // Every team gets a lead and a few members; transition subjects are members.
    people: Math.max(count(PER_SCALE.people), managers + transitions + 2 * sites * departmentsPerSite * teamsPerDepartment),
    vendors: count(PER_SCALE.vendors),
    purchaseRequests: count(PER_SCALE.purchaseRequests),
    systems: count(PER_SCALE.systems),
    learningAssignments: count(PER_SCALE.learningAssignments),
    handovers: count(PER_SCALE.handovers),
    transitions,
    assets: count(PER_SCALE.assets),
    workplaceRecords: count(PER_SCALE.workplaceRecords),
  };
}

export function locationCount(c: SeedCounts): number {
  const departments = c.sites * c.departmentsPerSite;
  return c.sites + departments + departments * c.teamsPerDepartment;
}
