import { systems } from '../../registers/catalogue.js';
import { IN_HOUSE_SYSTEMS, type SystemCategory } from '../catalog.js';
import type { SeedContext } from '../context.js';
import { Coverage } from '../coverage.js';
import type { PersonRef, VendorRef } from '../directory.js';
import { between, iso } from '../time.js';

const CATEGORIES: readonly SystemCategory[] = ['PRODUCTIVITY', 'ENGINEERING', 'FINANCE', 'HR', 'SALES', 'SECURITY', 'OTHER'];
const CATEGORY_WEIGHTS = [25, 22, 12, 10, 12, 12, 7];
const STATUSES = ['ACTIVE', 'PLANNED', 'RETIRED'] as const;
const STATUS_WEIGHTS = [75, 12, 13];
const LEVELS = ['USER', 'ADMIN'] as const;

/**
 * Systems and who holds access. Only ACTIVE systems have users; a PLANNED one has at most its
 * owner; a RETIRED one has nobody left. Transition subjects owed an access get it here first.
 */
export async function seedSystems(ctx: SeedContext, count: number): Promise<void> {
  const rng = ctx.stream('systems');
  const cover = new Coverage();
  const { dir } = ctx;
  const vendorsByCategory = new Map<SystemCategory, VendorRef[]>();
  for (const v of dir.vendors) {
    if (!v.systemCategory || v.category !== 'SOFTWARE') continue;
    vendorsByCategory.set(v.systemCategory, [...(vendorsByCategory.get(v.systemCategory) ?? []), v]);
  }
  const inHouseNext = new Map<SystemCategory, number>();
  const usedNames = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const id = ctx.keys.id('sys', i);
    const category = cover.pick(rng, 'category', CATEGORIES, CATEGORY_WEIGHTS);
    const status = cover.pick(rng, 'status', STATUSES, STATUS_WEIGHTS);
    // Prefer a vendor not yet used, so a small picture has one system per product.
    const candidates = vendorsByCategory.get(category) ?? [];
    const unused = candidates.filter((v) => !usedNames.has(v.name));
    const vendor = candidates.length > 0 && rng.chance(0.7) ? rng.pick(unused.length > 0 ? unused : candidates) : undefined;
    let base = vendor?.name;
    if (!base) {
      const names = IN_HOUSE_SYSTEMS[category];
      const n = inHouseNext.get(category) ?? 0;
      inHouseNext.set(category, n + 1);
      base = names[n % names.length] as string;
    }
    const owner = rng.chance(0.92) ? dir.pickAssignable(rng) : undefined;
    const site = rng.chance(0.4) ? dir.site(owner?.siteId ?? '') : undefined;
    // Names repeat at larger scales (one CRM per region); a suffix keeps them distinguishable.
    const seen = usedNames.get(base) ?? 0;
    usedNames.set(base, seen + 1);
    const name = seen === 0 ? base : `${base} (${site?.city ?? `instance ${seen + 1}`})`;
    const { created, updated } = ctx.stamps(rng, i);
    const access: { person_id: string; level: string; granted_at: string }[] = [];
    const grant = (p: PersonRef, level: string) => {
      if (access.some((a) => a.person_id === p.id)) return;
      access.push({ person_id: p.id, level, granted_at: iso(between(rng, created, updated)) });
      dir.noteSystem(p.id, id);
    };
    if (owner && status !== 'RETIRED') grant(owner, 'OWNER');
    if (status === 'ACTIVE') {
      for (const p of dir.takeSystemWanters(2)) grant(p, 'USER');
      const users = rng.int(2, 10);
      for (let k = 0; k < users; k++) grant(dir.pickAssignable(rng), k === 0 ? 'ADMIN' : rng.weighted(LEVELS, [85, 15]));
    }
    ctx.writer.add(systems, {
      id,
      name,
      category,
      status,
      owner_id: owner?.id ?? null,
      vendor_id: vendor?.id ?? null,
      location_id: site?.id ?? null,
      access,
      created_at: iso(created),
      updated_at: iso(updated),
    });
    await ctx.writer.flushIfFull();
  }
}
