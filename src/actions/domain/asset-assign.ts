import { AppError } from '../../errors.js';
import { assets, people } from '../../registers/catalogue.js';
import { eventData } from '../../webhooks/events/event-types.js';
import { addToOpenTransitions, custodyOf } from './holdings.js';
import { opt, refuse, req } from './run.js';
import type { DomainAction } from './types.js';

/**
 * Checks an AVAILABLE asset out to an ACTIVE person: ASSIGNED, assigned_user_id, assigned_at,
 * expected_return_at, a new open custody entry; the asset joins `held_asset_ids` of the person's
 * open transitions. Emits `asset.assigned`.
 */
export const assetAssign: DomainAction = {
  module: 'assets',
  description: 'check an AVAILABLE asset out to an ACTIVE person (emits asset.assigned)',
  options: [
    { name: 'asset', placeholder: '<id>', description: 'asset id (ast_...)', kind: 'id', prefix: 'ast', required: true },
    { name: 'person', placeholder: '<id>', description: 'person id (per_...)', kind: 'id', prefix: 'per', required: true },
    {
      name: 'expected_return',
      placeholder: '<iso>',
      description: 'when the asset is expected back (ISO 8601 instant, in the future)',
      kind: 'timestamp',
    },
  ],
  target: (args) => req(args, 'asset'),
  async apply(ctx, args) {
    const assetId = req(args, 'asset');
    const personId = req(args, 'person');
    const expectedReturn = opt(args, 'expected_return') ?? null;
    const asset = await ctx.load(assets, assetId);
    if (asset.status !== 'AVAILABLE') {
      const to = asset.status === 'ASSIGNED' && asset.assigned_user_id ? ` to ${asset.assigned_user_id}` : '';
      throw refuse(`asset ${assetId} is ${asset.status}${to}; only an AVAILABLE asset can be assigned`);
    }
    const person = await ctx.load(people, personId, 'person', 'check');
    if (person.status !== 'ACTIVE') throw refuse(`person ${personId} is ${person.status}; assets are assigned to ACTIVE people only`);
    if (expectedReturn !== null && Date.parse(expectedReturn) <= ctx.now) {
      throw new AppError('invalid_parameter', `expected return ${expectedReturn} is not in the future (now is ${ctx.nowIso})`, {
        param: 'expected_return',
      });
    }
    const assigned = await ctx.write(assets, {
      ...asset,
      status: 'ASSIGNED',
      assigned_user_id: personId,
      assigned_at: ctx.nowIso,
      expected_return_at: expectedReturn,
      custody: [...custodyOf(asset), { person_id: personId, from: ctx.nowIso, to: null }],
    });
    await ctx.emit('asset.assigned', eventData.assetAssigned(assigned));
    await addToOpenTransitions(ctx, personId, assetId);
  },
};
