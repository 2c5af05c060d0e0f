import { learningAssignments } from '../../registers/catalogue.js';
import { LEARNING_CONTENT } from '../catalog.js';
import type { SeedContext } from '../context.js';
import { Coverage } from '../coverage.js';
import { KeyedRandom } from '../random.js';
import { DAY, iso } from '../time.js';
import { writeTask } from './tasks.js';

const STATUSES = ['ASSIGNED', 'IN_PROGRESS', 'COMPLETED'] as const;
const STATUS_WEIGHTS = [30, 15, 55];

/**
 * Policies and courses assigned to people, each with its task. Completion evidence agrees with
 * the kind: a policy is ACKNOWLEDGED, a course PASSED (with a score), and either may be
 * RECORDED_ON_BEHALF by someone else (who is then `recorded_by_id`).
 */
export async function seedLearning(ctx: SeedContext, count: number): Promise<void> {
  const rng = ctx.stream('learning-assignments');
  const cover = new Coverage();
  const { dir } = ctx;
  // One id per catalogue entry and workspace, whatever the seed or run: a bulk seed's
  // assignments of "Code of Conduct" name the same content as the workspace's first seed.
  const contentKeys = new KeyedRandom(`${ctx.workspaceId}:learning-content`);
  const contentIds = LEARNING_CONTENT.map((_, k) => contentKeys.id('cnt', k));
  for (let i = 0; i < count; i++) {
    const id = ctx.keys.id('lrn', i);
    const c = i < LEARNING_CONTENT.length ? i : rng.int(0, LEARNING_CONTENT.length - 1);
    const content = LEARNING_CONTENT[c] as (typeof LEARNING_CONTENT)[number];
    const person = dir.pickActive(rng);
    const status = cover.pick(rng, 'status', STATUSES, STATUS_WEIGHTS);
    const { created, updated } = ctx.stamps(rng, i, 90 * DAY);
    const manager = person.managerId ? dir.person(person.managerId) : undefined;
    const assignedBy = rng.chance(0.15) ? undefined : manager?.active ? manager : dir.pickActive(rng, person.siteId);
    const due = rng.chance(0.1) ? null : created + rng.int(14, 45) * DAY;
    let method: 'ACKNOWLEDGED' | 'PASSED' | 'RECORDED_ON_BEHALF' | null = null;
    let recordedBy: string | null = null;
    let score: number | null = null;
    if (status === 'COMPLETED') {
      const own = content.kind === 'POLICY' ? 'ACKNOWLEDGED' : 'PASSED';
      method = cover.pick(rng, `method:${content.kind}`, [own, 'RECORDED_ON_BEHALF'] as const, [85, 15]);
      if (method === 'RECORDED_ON_BEHALF') recordedBy = dir.pickColleague(rng, person).id;
      if (method === 'PASSED') score = rng.int(70, 100);
    }
    writeTask(ctx, rng, {
      title: `${content.kind === 'POLICY' ? 'Acknowledge' : 'Complete'}: ${content.title}`,
      sourceType: 'LEARNING_ASSIGNMENT',
      sourceId: id,
      assigneeId: person.id,
      locationId: person.siteId,
      status: status === 'COMPLETED' ? 'DONE' : 'OPEN',
      dueAt: due,
      sourceCreated: created,
    });
    ctx.writer.add(learningAssignments, {
      id,
      content_id: contentIds[c],
      content_title: content.title,
      content_kind: content.kind,
      person_id: person.id,
      assigned_by_id: assignedBy?.id ?? null,
      assigned_at: iso(created),
      due_at: due === null ? null : iso(due),
      status,
      completion_method: method,
      // Completion is the assignment's last write.
      completed_at: status === 'COMPLETED' ? iso(updated) : null,
      recorded_by_id: recordedBy,
      score,
      created_at: iso(created),
      updated_at: iso(updated),
    });
    await ctx.writer.flushIfFull();
  }
}

/** Each assignment makes exactly one task. */
export function learningTaskCount(count: number): number {
  return count;
}
