import { vendors } from '../../registers/catalogue.js';
import { OTHER_VENDORS, SOFTWARE_VENDORS, type VendorCategory } from '../catalog.js';
import type { SeedContext } from '../context.js';
import { Coverage } from '../coverage.js';
import { moneyMinor } from '../places.js';
import type { Random } from '../random.js';
import { addDaysToDate, DAY, iso, isoDate, startOfDay, YEAR } from '../time.js';

type VendorStatus = 'TRIAL' | 'ACTIVE' | 'CANCELLED' | 'EXPIRED';
/** `ACTIVE_NEAR`: the cancellation deadline falls within the next 30 days (the renewal warning window). */
type RenewalCase = VendorStatus | 'ACTIVE_NEAR';

const CATEGORIES: readonly VendorCategory[] = ['SOFTWARE', 'HARDWARE', 'SERVICES', 'FACILITIES', 'OTHER'];
const CATEGORY_WEIGHTS = [40, 15, 18, 15, 12];
/** The first vendors show every status and both a near and a far renewal. */
const FIRST_CASES: readonly RenewalCase[] = ['ACTIVE_NEAR', 'ACTIVE', 'TRIAL', 'CANCELLED', 'EXPIRED', 'ACTIVE_NEAR', 'ACTIVE'];
const CASES: readonly RenewalCase[] = ['ACTIVE', 'ACTIVE_NEAR', 'TRIAL', 'CANCELLED', 'EXPIRED'];
const CASE_WEIGHTS = [55, 12, 8, 10, 15];
const OTHER_COST_USD: Readonly<Record<Exclude<VendorCategory, 'SOFTWARE'>, readonly [number, number]>> = {
  HARDWARE: [5_000, 200_000],
  SERVICES: [10_000, 250_000],
  FACILITIES: [6_000, 150_000],
  OTHER: [2_000, 80_000],
};

interface Terms {
  status: VendorStatus;
  contractStart: string;
  renewal: string | null;
  notice: number;
  autoRenews: boolean;
}

/** Contract terms consistent with the status and the renewal case, relative to `now`. */
function terms(rng: Random, now: number, renewalCase: RenewalCase): Terms {
  const today = startOfDay(now);
  const day = (offset: number) => isoDate(today + offset * DAY);
  // Contracts renew on their anniversary: the start lies whole years before the renewal.
  const anniversaryStart = (renewalOffset: number) => {
    const years = Math.max(1, Math.ceil((renewalOffset * DAY) / YEAR)) + rng.int(0, 2);
    return day(renewalOffset - years * 365);
  };
  switch (renewalCase) {
    case 'ACTIVE_NEAR': {
      const notice = rng.pick([30, 30, 45, 60]);
      const renewalOffset = rng.int(2, 28) + notice;
      return {
        status: 'ACTIVE',
        contractStart: anniversaryStart(renewalOffset),
        renewal: day(renewalOffset),
        notice,
        autoRenews: rng.chance(0.8),
      };
    }
    case 'ACTIVE': {
      const renewalOffset = rng.int(130, 540);
      return {
        status: 'ACTIVE',
        contractStart: anniversaryStart(renewalOffset),
        renewal: day(renewalOffset),
        notice: rng.pick([30, 30, 60, 90]),
        autoRenews: rng.chance(0.75),
      };
    }
    case 'TRIAL': {
      const renewalOffset = rng.int(5, 30);
      return {
        status: 'TRIAL',
        contractStart: day(-rng.int(1, 25)),
        renewal: day(renewalOffset),
        notice: rng.int(0, 3),
        autoRenews: rng.chance(0.5),
      };
    }
    case 'CANCELLED':
      return { status: 'CANCELLED', contractStart: day(-rng.int(60, 1500)), renewal: null, notice: rng.pick([30, 60]), autoRenews: false };
    case 'EXPIRED': {
      const renewalOffset = -rng.int(10, 400);
      return {
        status: 'EXPIRED',
        contractStart: day(renewalOffset - 365 * rng.int(1, 3)),
        renewal: day(renewalOffset),
        notice: rng.pick([30, 60]),
        autoRenews: false,
      };
    }
  }
}

/** `remember: false` (bulk seeds) keeps vendors out of the directory so memory stays flat. */
export async function seedVendors(ctx: SeedContext, count: number, remember = true): Promise<void> {
  const rng = ctx.stream('vendors');
  const cover = new Coverage();
  const perCategory = new Map<VendorCategory, number>();
  for (let i = 0; i < count; i++) {
    const id = ctx.keys.id('ven', i);
    const category = cover.pick(rng, 'category', CATEGORIES, CATEGORY_WEIGHTS);
    const renewalCase = FIRST_CASES[i] ?? rng.weighted(CASES, CASE_WEIGHTS);
    const t = terms(rng, ctx.now, renewalCase);
    const nth = perCategory.get(category) ?? 0;
    perCategory.set(category, nth + 1);
    const software = category === 'SOFTWARE' ? SOFTWARE_VENDORS[nth % SOFTWARE_VENDORS.length] : undefined;
    const names = category === 'SOFTWARE' ? SOFTWARE_VENDORS.map((v) => v.name) : OTHER_VENDORS[category];
    const round = Math.floor(nth / names.length);
    const name = `${names[nth % names.length]}${round === 0 ? '' : ` (contract ${round + 1})`}`;
    const site = rng.chance(0.7) ? rng.pick(ctx.dir.sites) : undefined;
    const owner = rng.chance(0.9) ? ctx.dir.pickActive(rng, site?.id) : undefined;
    const currency = site?.currency ?? 'USD';
    let seats: number | null = null;
    let usd: number;
    if (software) {
      seats = rng.pick([5, 10, 25, 50, 100, 150, 250, 500]);
      usd = seats * software.seatUsd * 12;
    } else {
      const [min, max] = OTHER_COST_USD[category as Exclude<VendorCategory, 'SOFTWARE'>];
      usd = rng.int(min, max);
    }
    const seatsAssigned =
      seats === null ? null : t.status === 'CANCELLED' || t.status === 'EXPIRED' ? 0 : rng.int(Math.ceil(seats * 0.5), seats);
    const { created, updated } = ctx.stamps(rng, i);
    ctx.writer.add(vendors, {
      id,
      name,
      category,
      status: t.status,
      owner_id: owner?.id ?? null,
      location_id: site?.id ?? null,
      // A trial costs nothing until it converts.
      annual_cost_minor: t.status === 'TRIAL' ? 0 : moneyMinor(usd, currency),
      currency,
      seats_purchased: seats,
      seats_assigned: seatsAssigned,
      contract_start_date: t.contractStart,
      renewal_date: t.renewal,
      notice_period_days: t.notice,
      cancellation_deadline: t.renewal === null ? null : addDaysToDate(t.renewal, -t.notice),
      auto_renews: t.autoRenews,
      created_at: iso(created),
      updated_at: iso(updated),
    });
    if (remember)
      ctx.dir.vendors.push({ id, name, category, locationId: site?.id ?? null, currency, systemCategory: software?.system ?? null });
    await ctx.writer.flushIfFull();
  }
}
