import { assets } from '../../registers/catalogue.js';
import { eventData } from '../../webhooks/events/event-types.js';
import { dropFromOpenTransitions, holderOf, returnedAsset } from './holdings.js';
import { refuse, req } from './run.js';
import type { DomainAction } from './types.js';

/**
 * Returns an ASSIGNED asset: AVAILABLE, unassigned, its custody entry closed; it leaves
 * `held_asset_ids` of open transitions. Emits `asset.returned`.
 */
export const assetReturn: DomainAction = {
  module: 'assets',
  description: 'return an ASSIGNED asset (emits asset.returned)',
  options: [{ name: 'asset', placeholder: '<id>', description: 'asset id (ast_...)', kind: 'id', prefix: 'ast', required: true }],
  target: (args) => req(args, 'asset'),
  async apply(ctx, args) {
    const assetId = req(args, 'asset');
    const asset = await ctx.load(assets, assetId);
    if (asset.status !== 'ASSIGNED') throw refuse(`asset ${assetId} is ${asset.status}; only an ASSIGNED asset can be returned`);
    const from = holderOf(asset);
    if (!from) throw refuse(`asset ${assetId} is ASSIGNED but names nobody who holds it; correct it with wsops correct`);
    const returned = await ctx.write(assets, returnedAsset(asset, ctx.nowIso));
    await ctx.emit('asset.returned', eventData.assetReturned(returned, from, ctx.nowIso));
    await dropFromOpenTransitions(ctx, [assetId]);
  },
};
