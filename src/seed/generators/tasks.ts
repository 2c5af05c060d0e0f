import { tasks } from '../../registers/catalogue.js';
import type { SeedContext } from '../context.js';
import type { Random } from '../random.js';
import { between, DAY, iso, recordStamps } from '../time.js';

export type TaskSource = 'HANDOVER' | 'LEARNING_ASSIGNMENT' | 'TRANSITION';
export type TaskStatus = 'OPEN' | 'DONE' | 'CANCELLED';

export interface TaskInput {
  title: string;
  sourceType: TaskSource;
  sourceId: string;
  assigneeId: string | null;
  locationId: string | null;
  status: TaskStatus;
  dueAt: number | null;
  /** When the source record was created: a task cannot be older than what generated it. */
  sourceCreated: number;
}

/**
 * Writes one task and returns its id. Tasks are only ever made here, by the generator of their
 * source, so every task's `source_id` names a record that exists and refers back to it.
 */
export function writeTask(ctx: SeedContext, rng: Random, input: TaskInput): string {
  const id = ctx.keys.id('tsk', ctx.nextTaskIndex++);
  const { updated } = recordStamps(rng, ctx.now);
  const created = Math.min(updated, input.sourceCreated + Math.floor(rng.float() * DAY));
  ctx.writer.add(tasks, {
    id,
    title: input.title,
    source_type: input.sourceType,
    source_id: input.sourceId,
    assignee_id: input.assigneeId,
    location_id: input.locationId,
    status: input.status,
    due_at: input.dueAt === null ? null : iso(input.dueAt),
    completed_at: input.status === 'DONE' ? iso(between(rng, created, updated)) : null,
    created_at: iso(created),
    updated_at: iso(updated),
  });
  return id;
}
