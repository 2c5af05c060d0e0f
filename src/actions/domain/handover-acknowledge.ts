import { handovers } from '../../registers/catalogue.js';
import { eventData } from '../../webhooks/events/event-types.js';
import { refuse, req } from './run.js';
import type { DomainAction } from './types.js';

/** The recipient acknowledges a SENT handover: ACKNOWLEDGED, acknowledged_at. Emits `handover.acknowledged`. */
export const handoverAcknowledge: DomainAction = {
  module: 'handovers',
  description: 'acknowledge a SENT handover (emits handover.acknowledged)',
  options: [{ name: 'handover', placeholder: '<id>', description: 'handover id (hnd_...)', kind: 'id', prefix: 'hnd', required: true }],
  target: (args) => req(args, 'handover'),
  async apply(ctx, args) {
    const id = req(args, 'handover');
    const handover = await ctx.load(handovers, id);
    if (handover.status !== 'SENT') throw refuse(`handover ${id} is ${handover.status}; only a SENT handover can be acknowledged`);
    const acknowledged = await ctx.write(handovers, { ...handover, status: 'ACKNOWLEDGED', acknowledged_at: ctx.nowIso });
    await ctx.emit('handover.acknowledged', eventData.handoverAcknowledged(acknowledged));
  },
};
