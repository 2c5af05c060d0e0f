/** What a person holds: custody of assets, and the `held_*_ids` of their open transitions. */
import { assets, transitions } from '../../registers/catalogue.js';
import type { RecordObject } from '../../writes/records.js';
import type { ActionContext } from './types.js';

export const OPEN_TRANSITION = ['DRAFT', 'IN_PROGRESS'] as const;

interface CustodyEntry {
  person_id: string;
  from: string;
  to: string | null;
}

export function custodyOf(asset: RecordObject): CustodyEntry[] {
  return Array.isArray(asset.custody) ? (asset.custody as CustodyEntry[]) : [];
}

/** Who an ASSIGNED asset is with: its assigned user, or else the holder of its open custody entry. */
export function holderOf(asset: RecordObject): string | undefined {
  if (typeof asset.assigned_user_id === 'string') return asset.assigned_user_id;
  return [...custodyOf(asset)].reverse().find((c) => c.to === null)?.person_id;
}

/** The asset back on the shelf: AVAILABLE, unassigned, its open custody entry closed at `at`. */
export function returnedAsset(asset: RecordObject, at: string): RecordObject {
  return {
    ...asset,
    status: 'AVAILABLE',
    assigned_user_id: null,
    assigned_at: null,
    expected_return_at: null,
    custody: custodyOf(asset).map((c) => (c.to === null ? { ...c, to: at } : c)),
  };
}

/** Adds the asset to `held_asset_ids` of the person's open transitions that do not list it yet. */
export async function addToOpenTransitions(ctx: ActionContext, personId: string, assetId: string): Promise<void> {
  const open = await ctx.query(transitions, { statuses: OPEN_TRANSITION, naming: personId }, (t) => t.person_id === personId);
  for (const t of open) {
    const held = (t.held_asset_ids as string[] | null) ?? [];
    if (!held.includes(assetId)) await ctx.write(transitions, { ...t, held_asset_ids: [...held, assetId] });
  }
}

/** Removes assets from `held_asset_ids` of every open transition that lists them (except `skip`). */
export async function dropFromOpenTransitions(ctx: ActionContext, assetIds: readonly string[], skip?: string): Promise<void> {
  if (assetIds.length === 0) return;
  const naming = assetIds.length === 1 ? assetIds[0] : undefined;
  const listing = await ctx.query(
    transitions,
    { statuses: OPEN_TRANSITION, naming },
    (t) => t.id !== skip && ((t.held_asset_ids as string[] | null) ?? []).some((id) => assetIds.includes(id)),
  );
  for (const t of listing) {
    const held = (t.held_asset_ids as string[]).filter((id) => !assetIds.includes(id));
    await ctx.write(transitions, { ...t, held_asset_ids: held });
  }
}

/** Every asset ASSIGNED to the person. */
export function assetsAssignedTo(ctx: ActionContext, personId: string): Promise<RecordObject[]> {
  return ctx.query(assets, { statuses: ['ASSIGNED'], naming: personId }, (a) => holderOf(a) === personId);
}
