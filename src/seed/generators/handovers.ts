import { handovers } from '../../registers/catalogue.js';
import { HANDOVER_ITEMS, HANDOVER_NOTES, type HandoverKind } from '../catalog.js';
import type { SeedContext } from '../context.js';
import { coverByIndex } from '../coverage.js';
import { DAY, HOUR, iso, startOfDay } from '../time.js';
import type { TaskStatus } from './tasks.js';
import { writeTask } from './tasks.js';

type HandoverStatus = 'DRAFT' | 'SENT' | 'ACKNOWLEDGED' | 'CANCELLED';

const KINDS: readonly HandoverKind[] = ['HOLIDAY', 'SHIFT', 'ROLE'];
const KIND_WEIGHTS = [50, 35, 15];
/** SENT first: the demo needs a handover waiting for acknowledgement. */
const STATUSES: readonly HandoverStatus[] = ['SENT', 'ACKNOWLEDGED', 'DRAFT', 'CANCELLED'];
const STATUS_WEIGHTS = [25, 55, 10, 10];

export interface HandoverPlan {
  kind: HandoverKind;
  status: HandoverStatus;
  items: number;
}

/**
 * Handover `i`'s kind, status and item count, from randomness keyed by its index: the number of
 * tasks a seed will make is known before anything is written, without storing the plans.
 */
export function handoverPlan(ctx: SeedContext, index: number): HandoverPlan {
  const rng = ctx.keys.at('handover-plan', index);
  return {
    kind: coverByIndex(rng, index, KINDS, KIND_WEIGHTS),
    status: coverByIndex(rng, index, STATUSES, STATUS_WEIGHTS),
    items: rng.int(1, 4),
  };
}

/** Items get tasks once a handover is sent; a draft's items have none yet. */
export function handoverTaskCount(ctx: SeedContext, count: number): number {
  let n = 0;
  for (let i = 0; i < count; i++) {
    const plan = handoverPlan(ctx, i);
    if (plan.status !== 'DRAFT') n += plan.items;
  }
  return n;
}

export async function seedHandovers(ctx: SeedContext, count: number): Promise<void> {
  const rng = ctx.stream('handovers');
  const { dir } = ctx;
  for (let i = 0; i < count; i++) {
    const plan = handoverPlan(ctx, i);
    const id = ctx.keys.id('hnd', i);
    const from = dir.pickActive(rng);
    const recipient = dir.pickColleague(rng, from);
    const { created, updated } = ctx.stamps(rng, i, 30 * DAY);
    // Sending and acknowledging are writes, so they happen no later than the last one.
    const acknowledged = plan.status === 'ACKNOWLEDGED' ? updated : null;
    let starts: number;
    let ends: number | null;
    if (plan.kind === 'SHIFT') {
      starts = startOfDay(updated) + rng.pick([6, 14, 22]) * HOUR + rng.int(0, 3) * DAY;
      ends = starts + 8 * HOUR;
    } else if (plan.kind === 'HOLIDAY') {
      starts = startOfDay(updated) + 8 * HOUR + rng.int(1, 21) * DAY;
      ends = starts + rng.int(4, 15) * DAY;
    } else {
      starts = startOfDay(updated) + 9 * HOUR + rng.int(1, 30) * DAY;
      ends = null;
    }
    const titles = rng.sample(HANDOVER_ITEMS[plan.kind], plan.items);
    const items = titles.map((title) => {
      let taskId: string | null = null;
      if (plan.status !== 'DRAFT') {
        const status: TaskStatus =
          plan.status === 'CANCELLED' ? 'CANCELLED' : plan.status === 'ACKNOWLEDGED' && rng.chance(0.6) ? 'DONE' : 'OPEN';
        taskId = writeTask(ctx, rng, {
          title,
          sourceType: 'HANDOVER',
          sourceId: id,
          assigneeId: recipient.id,
          locationId: from.siteId,
          status,
          dueAt: ends ?? starts + 7 * DAY,
          sourceCreated: created,
        });
      }
      return { id: `itm_${rng.base62(12)}`, title, notes: rng.chance(0.6) ? rng.pick(HANDOVER_NOTES) : null, task_id: taskId };
    });
    ctx.writer.add(handovers, {
      id,
      kind: plan.kind,
      from_person_id: from.id,
      recipient_id: recipient.id,
      location_id: rng.chance(0.9) ? from.siteId : null,
      status: plan.status,
      starts_at: iso(starts),
      ends_at: ends === null ? null : iso(ends),
      items,
      acknowledged_at: acknowledged === null ? null : iso(acknowledged),
      created_at: iso(created),
      updated_at: iso(updated),
    });
    await ctx.writer.flushIfFull();
  }
}
