import { purchaseRequests } from '../../registers/catalogue.js';
import { PURCHASE_DESCRIPTIONS, PURCHASE_TEMPLATES } from '../catalog.js';
import type { SeedContext } from '../context.js';
import type { PersonRef } from '../directory.js';
import { moneyMinor } from '../places.js';
import type { Random } from '../random.js';
import { between, DAY, iso } from '../time.js';

type RequestStatus = 'DRAFT' | 'SUBMITTED' | 'CHANGES_REQUESTED' | 'APPROVED' | 'REJECTED' | 'WITHDRAWN';
type Decision = 'PENDING' | 'APPROVED' | 'REJECTED' | 'PASSED';

interface Shape {
  status: RequestStatus;
  approvers: number;
  /** 1-based step the request stands at (the current approver, or where it stopped). */
  step: number;
  /** Steps before `step` that were passed on rather than approved. */
  passFirst?: boolean;
}

/**
 * The first requests show every status and decision: a SUBMITTED one waiting on its first of
 * three approvers (three PENDING), an APPROVED one whose first step was PASSED, a SUBMITTED one
 * at its second step.
 */
const FIRST: readonly Shape[] = [
  { status: 'SUBMITTED', approvers: 3, step: 1 },
  { status: 'APPROVED', approvers: 2, step: 3, passFirst: true },
  { status: 'REJECTED', approvers: 2, step: 2 },
  { status: 'SUBMITTED', approvers: 2, step: 2 },
  { status: 'DRAFT', approvers: 2, step: 1 },
  { status: 'CHANGES_REQUESTED', approvers: 2, step: 1 },
  { status: 'WITHDRAWN', approvers: 1, step: 1 },
];
const STATUSES: readonly RequestStatus[] = ['DRAFT', 'SUBMITTED', 'CHANGES_REQUESTED', 'APPROVED', 'REJECTED', 'WITHDRAWN'];
const STATUS_WEIGHTS = [8, 22, 6, 40, 14, 10];

function randomShape(rng: Random, usd: number): Shape {
  const status = rng.weighted(STATUSES, STATUS_WEIGHTS);
  // Larger amounts need more signatures.
  const approvers = usd < 2_000 ? 1 : usd < 20_000 ? 2 : 3;
  return { status, approvers, step: status === 'APPROVED' ? approvers + 1 : rng.int(1, approvers) };
}

export async function seedPurchaseRequests(ctx: SeedContext, count: number): Promise<void> {
  const rng = ctx.stream('purchase-requests');
  const { dir } = ctx;
  const finance = dir.active.filter((p) => p.department === 'Finance');
  for (let i = 0; i < count; i++) {
    const id = ctx.keys.id('prq', i);
    const requester = dir.pickActive(rng);
    const site = dir.site(requester.siteId);
    let template = rng.pick(PURCHASE_TEMPLATES);
    const vendor = template.usesVendor && dir.vendors.length > 0 && rng.chance(0.85) ? rng.pick(dir.vendors) : undefined;
    if (template.title.includes('{vendor}') && !vendor) template = PURCHASE_TEMPLATES[0] as (typeof PURCHASE_TEMPLATES)[number];
    const team = requester.teamId ? dir.team(requester.teamId) : undefined;
    const title = template.title
      .replace('{team}', team ? team.name.replace(/ \(.*\)$/, '') : (requester.department ?? 'the leadership team'))
      .replace('{site}', site?.city ?? 'head')
      .replace('{vendor}', vendor?.name ?? '')
      .replace('{n}', String(rng.int(3, 20)));
    const usd = rng.int(template.usd[0], template.usd[1]);
    const currency = vendor?.currency ?? site?.currency ?? 'USD';
    const planned = FIRST[i] ?? randomShape(rng, usd);
    const chain = approverChain(rng, ctx, requester, finance, planned.approvers);
    // A tiny directory may not have enough distinct approvers: the shape follows the real chain.
    const shape = { ...planned, step: Math.min(planned.step, planned.status === 'APPROVED' ? chain.length + 1 : chain.length) };
    const { created, updated } = ctx.stamps(rng, i, 45 * DAY);
    const submitted = Math.min(updated, created + Math.floor(rng.float() * 2 * DAY));
    const decided = decisions(rng, shape, chain.length, submitted, updated);
    const approvers = chain.map((p, k) => ({
      person_id: p.id,
      step: k + 1,
      decision: decided[k]?.decision ?? 'PENDING',
      decided_at: decided[k] ? iso(decided[k].at) : null,
    }));
    const final = shape.status === 'APPROVED' || shape.status === 'REJECTED';
    ctx.writer.add(purchaseRequests, {
      id,
      title,
      description: rng.chance(0.75) ? rng.pick(PURCHASE_DESCRIPTIONS) : null,
      requester_id: requester.id,
      location_id: rng.chance(0.9) ? requester.siteId : null,
      vendor_id: vendor?.id ?? null,
      amount_minor: moneyMinor(usd, currency),
      currency,
      status: shape.status,
      approvers,
      current_approver_id: shape.status === 'SUBMITTED' ? (chain[shape.step - 1]?.id ?? null) : null,
      decided_at: final ? iso(updated) : null,
      created_at: iso(created),
      updated_at: iso(updated),
    });
    await ctx.writer.flushIfFull();
  }
}

/** Distinct active approvers other than the requester: their manager, then Finance, then anyone. */
function approverChain(rng: Random, ctx: SeedContext, requester: PersonRef, finance: readonly PersonRef[], count: number): PersonRef[] {
  const chain: PersonRef[] = [];
  const add = (p: PersonRef | undefined) => {
    if (p?.active && p.id !== requester.id && !chain.some((c) => c.id === p.id) && chain.length < count) chain.push(p);
  };
  add(requester.managerId ? ctx.dir.person(requester.managerId) : undefined);
  if (finance.length > 0) add(rng.pick(finance));
  for (let attempt = 0; chain.length < count && attempt < 50; attempt++) add(ctx.dir.pickActive(rng));
  return chain;
}

/**
 * Decisions of the steps before the request's stopping point, at increasing times between its
 * submission and its last write. A final decision (approval of the last step, a rejection) is
 * the last write itself. Later steps stay PENDING.
 */
function decisions(rng: Random, shape: Shape, steps: number, submitted: number, updated: number): { decision: Decision; at: number }[] {
  if (shape.status === 'DRAFT') return [];
  const decidedSteps =
    shape.status === 'APPROVED' ? steps : shape.status === 'REJECTED' ? Math.min(shape.step, steps) : Math.min(shape.step - 1, steps - 1);
  const times = Array.from({ length: decidedSteps }, () => between(rng, submitted, updated)).sort((a, b) => a - b);
  return times.map((at, k) => {
    const last = k === decidedSteps - 1;
    let decision: Decision = 'APPROVED';
    if (shape.status === 'REJECTED' && last) decision = 'REJECTED';
    // Passing is refused at the last step, so only earlier steps are ever PASSED.
    else if (k < steps - 1 && (shape.passFirst ? k === 0 : rng.chance(0.15))) decision = 'PASSED';
    const final = last && (shape.status === 'APPROVED' || shape.status === 'REJECTED');
    return { decision, at: final ? updated : at };
  });
}
