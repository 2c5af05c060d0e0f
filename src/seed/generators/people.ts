import { people } from '../../registers/catalogue.js';
import type { SeedContext } from '../context.js';
import type { PersonRef, TeamRef } from '../directory.js';
import { emailLocalPart, nameAt } from '../names.js';
import { DEPARTMENTS } from '../places.js';
import type { Random } from '../random.js';
import { between, DAY, iso, isoDate, startOfDay, YEAR } from '../time.js';
import type { TransitionPlan } from './transitions.js';

/**
 * The organisation chart, by index: person 0 leads the company, then one head per department,
 * one lead per team, then members spread over the teams. The last members are the subjects of
 * the transitions, so their status and dates agree with them.
 */
export interface PeopleLayout {
  count: number;
  /** Index of the first member (people before it manage someone). */
  firstMember: number;
}

export function peopleLayout(ctx: SeedContext, count: number): PeopleLayout {
  return { count, firstMember: 1 + ctx.dir.departments.length + ctx.dir.teams.length };
}

export function personId(ctx: SeedContext, index: number): string {
  return ctx.keys.id('per', index);
}

export async function seedPeople(ctx: SeedContext, layout: PeopleLayout, plans: readonly TransitionPlan[]): Promise<void> {
  const rng = ctx.stream('people');
  const { dir } = ctx;
  const departments = dir.departments;
  const teams = dir.teams;
  const givenOffset = rng.int(0, 1000);
  const familyOffset = rng.int(0, 1000);
  const headOf = new Map(departments.map((d, i) => [d.id, personId(ctx, 1 + i)]));
  const firstSubject = layout.count - plans.length;
  for (let i = 0; i < layout.count; i++) {
    const id = personId(ctx, i);
    let team: TeamRef | undefined;
    let siteId: string;
    let managerId: string | null;
    let department: string | null;
    let jobTitle: string;
    if (i === 0) {
      siteId = (dir.sites[0] as { id: string }).id;
      managerId = null;
      department = null;
      jobTitle = 'Chief Executive Officer';
    } else if (i <= departments.length) {
      const d = departments[i - 1] as (typeof departments)[number];
      siteId = d.siteId;
      managerId = personId(ctx, 0);
      department = d.name;
      jobTitle = `Head of ${d.name}`;
    } else if (i < layout.firstMember) {
      team = teams[i - 1 - departments.length] as TeamRef;
      siteId = team.siteId;
      managerId = headOf.get(team.departmentId) ?? null;
      department = team.department;
      jobTitle = `Team Lead, ${team.name.replace(/ \(.*\)$/, '')}`;
    } else {
      const t = (i - layout.firstMember) % teams.length;
      team = teams[t] as TeamRef;
      siteId = team.siteId;
      managerId = personId(ctx, layout.firstMember - teams.length + t);
      department = team.department;
      jobTitle = rng.pick(DEPARTMENTS.find((d) => d.name === team?.department)?.titles ?? ['Specialist']);
    }
    const plan = i >= firstSubject ? plans[layout.count - 1 - i] : undefined;
    const dates = lifeDates(rng, ctx.now, i, i >= layout.firstMember && !plan, plan);
    const name = nameAt(i, givenOffset, familyOffset);
    const site = dir.site(siteId);
    const { created, updated } = ctx.stamps(rng, i);
    ctx.writer.add(people, {
      id,
      display_name: `${name.given} ${name.family}`,
      given_name: name.given,
      family_name: name.family,
      work_email: `${emailLocalPart(name.given, name.family)}${name.suffix}@${ctx.domain}`,
      work_phone: site && rng.chance(0.85) ? `${site.phonePrefix} ${rng.digits(4)} ${rng.digits(4)}` : null,
      job_title: jobTitle,
      team_id: team?.id ?? null,
      location_id: siteId,
      manager_id: managerId,
      status: dates.active ? 'ACTIVE' : 'INACTIVE',
      start_date: isoDate(dates.start),
      end_date: dates.end === null ? null : isoDate(dates.end),
      created_at: iso(created),
      updated_at: iso(updated),
    });
    const ref: PersonRef = {
      id,
      displayName: `${name.given} ${name.family}`,
      siteId,
      teamId: team?.id ?? null,
      managerId,
      active: dates.active,
      department,
    };
    dir.addPerson(ref);
    if (plan?.subjectActive) dir.track(id, plan.wantAssets, plan.wantSystems);
    await ctx.writer.flushIfFull();
  }
}

interface LifeDates {
  active: boolean;
  start: number;
  end: number | null;
}

/** Start and end of employment; a transition's subject takes them from its transition. */
function lifeDates(rng: Random, now: number, index: number, mayHaveLeft: boolean, plan: TransitionPlan | undefined): LifeDates {
  const today = startOfDay(now);
  const tenure = index === 0 ? 9 * YEAR : between(rng, 60 * DAY, 8 * YEAR);
  const start = startOfDay(today - tenure);
  if (plan?.kind === 'ONBOARDING') {
    return plan.subjectActive
      ? { active: true, start: plan.effective, end: null }
      : { active: false, start: plan.effective, end: plan.effective };
  }
  if (plan?.kind === 'OFFBOARDING') {
    const leaving = plan.status !== 'CANCELLED';
    return { active: plan.subjectActive, start: Math.min(start, plan.effective - 90 * DAY), end: leaving ? plan.effective : null };
  }
  // A few members left without a recorded transition (before transitions were tracked).
  if (mayHaveLeft && rng.chance(0.04)) {
    const end = startOfDay(between(rng, start + 30 * DAY, today - DAY));
    return { active: false, start, end };
  }
  return { active: true, start, end: null };
}

/**
 * Bulk people for an existing organisation: members of existing teams, managed by an active
 * person of the same site. They are not added to the directory (memory stays flat at any count). The
 * number after the email's local part, from `startIndex`, keeps emails unique beside the
 * people already there.
 */
export async function seedMorePeople(ctx: SeedContext, count: number, startIndex: number): Promise<void> {
  const rng = ctx.stream('people');
  const { dir } = ctx;
  const givenOffset = rng.int(0, 1000);
  const familyOffset = rng.int(0, 1000);
  for (let i = 0; i < count; i++) {
    const team = dir.teams.length > 0 ? rng.pick(dir.teams) : undefined;
    const siteId = team?.siteId ?? rng.pick(dir.sites).id;
    const manager = dir.active.length > 0 ? dir.pickActive(rng, siteId) : undefined;
    const name = nameAt(startIndex + i, givenOffset, familyOffset);
    const site = dir.site(siteId);
    const dates = lifeDates(rng, ctx.now, i, true, undefined);
    const { created, updated } = ctx.stamps(rng, i);
    ctx.writer.add(people, {
      id: personId(ctx, i),
      display_name: `${name.given} ${name.family}`,
      given_name: name.given,
      family_name: name.family,
      work_email: `${emailLocalPart(name.given, name.family)}${startIndex + i + 1}@${ctx.domain}`,
      work_phone: site && rng.chance(0.85) ? `${site.phonePrefix} ${rng.digits(4)} ${rng.digits(4)}` : null,
      job_title: rng.pick(DEPARTMENTS.find((d) => d.name === team?.department)?.titles ?? ['Specialist']),
      team_id: team?.id ?? null,
      location_id: siteId,
      manager_id: manager?.id ?? null,
      status: dates.active ? 'ACTIVE' : 'INACTIVE',
      start_date: isoDate(dates.start),
      end_date: dates.end === null ? null : isoDate(dates.end),
      created_at: iso(created),
      updated_at: iso(updated),
    });
    await ctx.writer.flushIfFull();
  }
}
