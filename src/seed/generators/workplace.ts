import { workplaceRecords } from '../../registers/catalogue.js';
import { WORKPLACE_DESCRIPTIONS, WORKPLACE_TITLES, type WorkplaceType } from '../catalog.js';
import type { SeedContext } from '../context.js';
import { Coverage } from '../coverage.js';
import type { PersonRef } from '../directory.js';
import type { Random } from '../random.js';
import { DAY, HOUR, iso, startOfDay } from '../time.js';

const TYPES: readonly WorkplaceType[] = ['INCIDENT', 'INSPECTION', 'VISITOR', 'FACILITY_REQUEST', 'DESK_BOOKING'];
const TYPE_WEIGHTS = [12, 10, 20, 18, 40];
const STATUSES = ['OPEN', 'IN_PROGRESS', 'RESOLVED', 'CLOSED'] as const;
const STATUS_WEIGHTS = [15, 15, 25, 45];

function fill(rng: Random, template: string): string {
  return template
    .replace('{floor}', String(rng.int(1, 6)))
    .replace('{room}', `${rng.int(1, 6)}.${String(rng.int(1, 30)).padStart(2, '0')}`)
    .replace('{desk}', String(rng.int(1, 60)).padStart(2, '0'));
}

/** The people a record concerns, by type: the booker of a desk, a visitor's host, those involved. */
function concerned(rng: Random, ctx: SeedContext, type: WorkplaceType, siteId: string | null): PersonRef[] {
  const someone = () => ctx.dir.pickActive(rng, siteId);
  switch (type) {
    case 'INCIDENT':
      return dedupe(Array.from({ length: rng.int(1, 2) }, someone));
    case 'INSPECTION':
      return rng.chance(0.5) ? [someone()] : [];
    default:
      return [someone()];
  }
}

function dedupe(people: PersonRef[]): PersonRef[] {
  return people.filter((p, i) => people.findIndex((q) => q.id === p.id) === i);
}

export async function seedWorkplace(ctx: SeedContext, count: number): Promise<void> {
  const rng = ctx.stream('workplace-records');
  const cover = new Coverage();
  for (let i = 0; i < count; i++) {
    const id = ctx.keys.id('wpr', i);
    const type = cover.pick(rng, 'record_type', TYPES, TYPE_WEIGHTS);
    const status = cover.pick(rng, 'status', STATUSES, STATUS_WEIGHTS);
    const site = rng.chance(0.95) ? rng.pick(ctx.dir.sites) : undefined;
    const people = concerned(rng, ctx, type, site?.id ?? null);
    const { created, updated } = ctx.stamps(rng, i, 20 * DAY);
    // Things are reported after they happen; a desk booking is made for a working day ahead.
    const occurred = type === 'DESK_BOOKING' ? startOfDay(created) + rng.int(0, 5) * DAY + 9 * HOUR : created - rng.int(0, 48) * HOUR;
    ctx.writer.add(workplaceRecords, {
      id,
      record_type: type,
      status,
      title: fill(rng, rng.pick(WORKPLACE_TITLES[type])),
      description: rng.chance(0.8) ? rng.pick(WORKPLACE_DESCRIPTIONS[type]) : null,
      location_id: site?.id ?? null,
      person_ids: people.map((p) => p.id),
      reported_by_id: rng.chance(0.9) ? (people[0]?.id ?? ctx.dir.pickActive(rng, site?.id).id) : null,
      occurred_at: iso(Math.min(occurred, ctx.now)),
      created_at: iso(created),
      updated_at: iso(updated),
    });
    await ctx.writer.flushIfFull();
  }
}
