import { assets } from '../../registers/catalogue.js';
import { ASSET_MODELS, type AssetCategory } from '../catalog.js';
import type { SeedContext } from '../context.js';
import { Coverage } from '../coverage.js';
import type { Random } from '../random.js';
import { addDaysToDate, between, DAY, iso, isoDate, YEAR } from '../time.js';

const CATEGORIES: readonly AssetCategory[] = ['LAPTOP', 'PHONE', 'MONITOR', 'VEHICLE', 'TOOL', 'FURNITURE', 'OTHER'];
const CATEGORY_WEIGHTS = [30, 20, 20, 3, 7, 12, 8];
const STATUSES = ['ASSIGNED', 'AVAILABLE', 'IN_MAINTENANCE', 'RETIRED', 'LOST'] as const;
const STATUS_WEIGHTS = [50, 30, 8, 8, 4];

export interface AssetOptions {
  /** Tags continue after the assets a workspace already has (`AST-000001` is the first). */
  tagStart: number;
}

function serialNumber(rng: Random, category: AssetCategory): string | null {
  switch (category) {
    case 'LAPTOP':
      return `C02${rng.alnum(9)}`;
    case 'PHONE':
      return `F${rng.alnum(11)}`;
    case 'MONITOR':
      return `CN-0${rng.alnum(5)}-${rng.digits(5)}`;
    case 'VEHICLE':
      // A VIN: 17 characters without I, O or Q.
      return `WV${rng.alnum(15)}`.replace(/[IOQ]/g, 'X');
    default:
      return rng.chance(0.5) ? `SN${rng.digits(8)}` : null;
  }
}

/**
 * Assets with a custody history that agrees with the status: an ASSIGNED asset has its holder,
 * `assigned_at` and exactly one open custody entry (`to: null`) for that holder; any other
 * status has only closed entries and no holder.
 */
export async function seedAssets(ctx: SeedContext, count: number, options: AssetOptions): Promise<void> {
  const rng = ctx.stream('assets');
  const cover = new Coverage();
  const { dir } = ctx;
  for (let i = 0; i < count; i++) {
    const id = ctx.keys.id('ast', i);
    const category = cover.pick(rng, 'category', CATEGORIES, CATEGORY_WEIGHTS);
    const status = cover.pick(rng, 'status', STATUSES, STATUS_WEIGHTS);
    const { created, updated } = ctx.stamps(rng, i, 3 * YEAR);
    const holder = status === 'ASSIGNED' ? dir.nextAssetHolder(rng) : undefined;
    // Custody: sorted instants between creation and the last write, taken in pairs (from, to);
    // an assigned asset's last instant opens the current holder's entry.
    const closed = rng.int(0, 2);
    const points: number[] = [];
    for (let k = 0; k < closed * 2 + (holder ? 1 : 0); k++) points.push(between(rng, created, updated));
    points.sort((a, b) => a - b);
    const custody: { person_id: string; from: string; to: string | null }[] = [];
    for (let k = 0; k < closed; k++) {
      custody.push({ person_id: rng.pick(dir.people).id, from: iso(points[2 * k] as number), to: iso(points[2 * k + 1] as number) });
    }
    let assignedAt: number | null = null;
    if (holder) {
      assignedAt = points[points.length - 1] as number;
      custody.push({ person_id: holder.id, from: iso(assignedAt), to: null });
      dir.noteAsset(holder.id, id);
    }
    const siteId = holder?.siteId ?? (status === 'LOST' && rng.chance(0.3) ? null : rng.pick(dir.sites).id);
    const purchased = category === 'FURNITURE' && rng.chance(0.2) ? null : isoDate(created - rng.int(0, 30) * DAY);
    const warrantyYears = category === 'LAPTOP' || category === 'PHONE' ? rng.int(1, 3) : rng.int(1, 5);
    ctx.writer.add(assets, {
      id,
      asset_tag: `AST-${String(options.tagStart + i + 1).padStart(6, '0')}`,
      name: rng.pick(ASSET_MODELS[category]),
      category,
      status,
      location_id: siteId,
      assigned_user_id: holder?.id ?? null,
      assigned_at: assignedAt === null ? null : iso(assignedAt),
      expected_return_at: assignedAt !== null && rng.chance(0.2) ? iso(assignedAt + rng.int(7, 90) * DAY) : null,
      serial_number: serialNumber(rng, category),
      purchase_date: purchased,
      warranty_expires_on: purchased === null || category === 'FURNITURE' ? null : addDaysToDate(purchased, warrantyYears * 365),
      custody,
      created_at: iso(created),
      updated_at: iso(updated),
    });
    await ctx.writer.flushIfFull();
  }
}
