/**
 * Deterministic demo data. `seedWorkspace` writes a complete, related picture of an
 * organisation into one workspace; `seedRegister` adds many records of one register to a
 * workspace (benchmarks: a million assets). Same inputs, same records; ids differ between
 * workspaces because every id is derived from a key that includes the workspace id.
 */
import { AppError } from '../errors.js';
import { registerByPath } from '../registers/catalogue.js';
import type { Database } from '../store/database.js';
import { getWorkspace } from '../workspaces/workspaces.js';
import type { RecordStore } from '../writes/records.js';
import { createContext, type SeedContext } from './context.js';
import { countRecords, existingEmailDomain, loadDirectory } from './existing.js';
import { seedAssets } from './generators/assets.js';
import { handoverTaskCount, seedHandovers } from './generators/handovers.js';
import { learningTaskCount, seedLearning } from './generators/learning.js';
import { seedLocations } from './generators/locations.js';
import { peopleLayout, personId, seedMorePeople, seedPeople } from './generators/people.js';
import { seedPurchaseRequests } from './generators/purchase-requests.js';
import { seedSystems } from './generators/systems.js';
import { planTransitions, seedTransitions, transitionTaskCount } from './generators/transitions.js';
import { seedVendors } from './generators/vendors.js';
import { seedWorkplace } from './generators/workplace.js';
import { COMPANIES } from './names.js';
import { countsForScale, locationCount } from './plan.js';
import { fnv1a } from './random.js';
import { SeedWriter } from './writer.js';

/** What this file takes of the services built at start (services.ts). */
export interface SeedServices {
  database: Database;
  records: RecordStore;
}

export { ASSETS_PER_SCALE, countsForScale, scaleForAssets } from './plan.js';

export interface SeedOptions {
  /** 1 is the small complete picture (about 490 records); N multiplies the counts by about N. */
  scale: number;
  seed: string;
  /** The instant the data is relative to (renewals due soon, `updated_at` over the past year). */
  now: number;
  onProgress?: (done: number, total: number) => void;
}

export interface SeedResult {
  /** Records written per register path. */
  counts: Record<string, number>;
  total: number;
}

export type BulkSeedOptions = Omit<SeedOptions, 'scale'>;

/**
 * Registers `seedRegister` can fill. Locations, transitions and tasks are left out: they only
 * make sense as part of a whole organisation (a transition lists what its subject holds, a
 * task exists because of its source).
 */
export const BULK_REGISTERS = [
  'assets',
  'people',
  'vendors',
  'purchase-requests',
  'systems',
  'learning-assignments',
  'handovers',
  'workplace-records',
] as const;

function checkOptions(seed: string, now: number): void {
  if (typeof seed !== 'string' || seed.length === 0) throw new AppError('invalid_parameter', 'seed must be a non-empty string');
  if (!Number.isFinite(now)) throw new AppError('invalid_parameter', 'now must be a time in milliseconds');
}

function emailDomain(seed: string, workspaceId: string): string {
  return `${COMPANIES[fnv1a(`${seed}:${workspaceId}`) % COMPANIES.length]}.example`;
}

/**
 * Seeds an empty workspace. Refuses one that already has records (the same seed would make the
 * same ids again), so a repeated `wsops seed` fails before writing anything.
 */
export async function seedWorkspace(services: SeedServices, workspaceId: string, options: SeedOptions): Promise<SeedResult> {
  checkOptions(options.seed, options.now);
  if (!Number.isFinite(options.scale) || options.scale <= 0) throw new AppError('invalid_parameter', 'scale must be a positive number');
  await getWorkspace(services.database.db, workspaceId);
  if ((await countRecords(services, workspaceId)) > 0) {
    throw new AppError('conflict', `workspace ${workspaceId} already has records; seed a new workspace`);
  }
  const counts = countsForScale(options.scale);
  const writer = new SeedWriter(services.records, workspaceId, options.onProgress);
  const ctx = createContext({
    seed: options.seed,
    workspaceId,
    namespace: 'workspace',
    now: options.now,
    writer,
    domain: emailDomain(options.seed, workspaceId),
  });

  // Transition subjects are the last people; their plans decide their status and dates.
  const plans = planTransitions(ctx, counts.transitions, (k) => personId(ctx, counts.people - 1 - k));
  writer.total =
    locationCount(counts) +
    counts.people +
    counts.vendors +
    counts.purchaseRequests +
    counts.systems +
    counts.assets +
    counts.workplaceRecords +
    counts.learningAssignments +
    learningTaskCount(counts.learningAssignments) +
    counts.handovers +
    handoverTaskCount(ctx, counts.handovers) +
    counts.transitions +
    transitionTaskCount(plans);

  await seedLocations(ctx, counts);
  await seedPeople(ctx, peopleLayout(ctx, counts.people), plans);
  await seedVendors(ctx, counts.vendors);
  // Systems and assets before transitions: a transition lists what its subject holds.
  await seedSystems(ctx, counts.systems);
  await seedAssets(ctx, counts.assets, { tagStart: 0 });
  await seedPurchaseRequests(ctx, counts.purchaseRequests);
  await seedLearning(ctx, counts.learningAssignments);
  await seedHandovers(ctx, counts.handovers);
  await seedTransitions(ctx, plans);
  await seedWorkplace(ctx, counts.workplaceRecords);
  await writer.flush();
  return { counts: { ...writer.counts }, total: writer.written };
}

/**
 * Adds `count` records of one register to a workspace, in batches, drawing people, sites and
 * vendors from a sample of what the workspace holds (an empty workspace first gets the
 * scale-1 locations and people). Learning assignments and handovers bring their tasks, which
 * the result counts. Calling it again adds more (ids come from a key that includes how many
 * records the register already has).
 */
export async function seedRegister(
  services: SeedServices,
  workspaceId: string,
  registerPath: string,
  count: number,
  options: BulkSeedOptions,
): Promise<SeedResult> {
  checkOptions(options.seed, options.now);
  const register = registerByPath(registerPath);
  if (!register || !(BULK_REGISTERS as readonly string[]).includes(register.path)) {
    throw new AppError('invalid_parameter', `seedRegister supports ${BULK_REGISTERS.join(', ')}; got "${registerPath}"`);
  }
  if (!Number.isSafeInteger(count) || count < 0) throw new AppError('invalid_parameter', 'count must be a whole number, 0 or more');
  await getWorkspace(services.database.db, workspaceId);
  const writer = new SeedWriter(services.records, workspaceId, options.onProgress);
  const existing = await countRecords(services, workspaceId, register.path);
  let dir = await loadDirectory(services, workspaceId);
  const domain = (await existingEmailDomain(services, workspaceId)) ?? emailDomain(options.seed, workspaceId);
  const base = { seed: options.seed, workspaceId, now: options.now, writer, domain };

  let directoryRecords = 0;
  if (dir.sites.length === 0 || dir.active.length === 0) {
    const counts = countsForScale(1);
    directoryRecords = locationCount(counts) + counts.people;
    writer.total = directoryRecords;
    const setup = createContext({ ...base, namespace: `bulk-directory:${existing}` });
    await seedLocations(setup, counts);
    await seedPeople(setup, peopleLayout(setup, counts.people), []);
    dir = setup.dir;
  }

  const ctx = createContext({ ...base, namespace: `bulk:${register.path}:${existing}`, dir, orderedCount: count });
  writer.total = directoryRecords + count + bulkTaskCount(ctx, register.path, count);
  await runBulk(ctx, register.path, count, existing);
  await writer.flush();
  return { counts: { ...writer.counts }, total: writer.written };
}

function bulkTaskCount(ctx: SeedContext, path: string, count: number): number {
  if (path === 'learning-assignments') return learningTaskCount(count);
  if (path === 'handovers') return handoverTaskCount(ctx, count);
  return 0;
}

async function runBulk(ctx: SeedContext, path: string, count: number, existing: number): Promise<void> {
  switch (path) {
    case 'assets':
      return seedAssets(ctx, count, { tagStart: existing });
    case 'people':
      return seedMorePeople(ctx, count, existing);
    case 'vendors':
      return seedVendors(ctx, count, false);
    case 'purchase-requests':
      return seedPurchaseRequests(ctx, count);
    case 'systems':
      return seedSystems(ctx, count);
    case 'learning-assignments':
      return seedLearning(ctx, count);
    case 'handovers':
      return seedHandovers(ctx, count);
    case 'workplace-records':
      return seedWorkplace(ctx, count);
  }
}
