/**
 * The domain actions (the write side): each changes the registers as the contract says, moves
 * `updated_at`, emits exactly its event in the same transaction (with one delivery job per
 * subscribed endpoint), refuses what does not fit the record's state without changing anything,
 * and rolls back entirely when it fails part-way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runAction } from '../../src/actions/domain/index.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';
import { assertMoved, Fixtures, type Rec } from './helpers.js';

const iso = (ms: number) => new Date(ms).toISOString();

for (const dialect of DIALECTS) {
  describe(`domain actions [${dialect}]`, () => {
    let h: Harness;
    before(async () => {
      h = await createHarness(dialect);
    });
    after(() => h.close());

    describe('asset.assign', () => {
      it('asset.assign checks an AVAILABLE asset out to an ACTIVE person, appends custody, adds it to their open transitions, and emits asset.assigned', async () => {
        const fx = await Fixtures.create(h);
        const endpoint = await fx.endpoint();
        const offboarding = await fx.first('transitions', (t) => t.kind === 'OFFBOARDING' && t.status === 'DRAFT');
        const personId = offboarding.person_id as string;
        assert.equal((await fx.api('people', personId)).status, 'ACTIVE');
        const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
        const expectedReturn = iso(h.clock() + 30 * 86_400_000);

        const result = await fx.act('asset.assign', { asset: asset.id, person: personId, expected_return: expectedReturn });
        const now = h.clock();

        const after = await fx.api('assets', asset.id);
        assert.equal(after.status, 'ASSIGNED');
        assert.equal(after.assigned_user_id, personId);
        assert.equal(after.assigned_at, iso(now));
        assert.equal(after.expected_return_at, expectedReturn);
        assert.deepEqual(after.custody, [...(asset.custody as unknown[]), { person_id: personId, from: iso(now), to: null }]);
        assertMoved(asset, after, now);
        const trn = await fx.api('transitions', offboarding.id);
        assert.ok((trn.held_asset_ids as string[]).includes(asset.id), 'the asset is listed among what the leaver holds');
        assertMoved(offboarding, trn, now);

        assert.deepEqual(
          result.records.map((r) => r.id),
          [asset.id, offboarding.id],
        );
        assert.deepEqual(result.records[0], after, 'the result carries the record exactly as the API returns it');
        const events = await fx.events();
        assert.equal(events.length, 1);
        assert.deepEqual(result.events, [events[0]?.id]);
        assert.equal(events[0]?.type, 'asset.assigned');
        assert.equal(events[0]?.created, iso(now));
        assert.deepEqual(events[0]?.data, {
          asset: { id: asset.id, asset_tag: asset.asset_tag, status: 'ASSIGNED' },
          assigned_user_id: personId,
          expected_return_at: expectedReturn,
        });
        assert.deepEqual(await fx.jobs(), [{ event_id: events[0]?.id, endpoint_id: endpoint, state: 'pending' }]);
        assert.deepEqual(await fx.audit(), [{ actor: 'cli', action: 'action.asset.assign', target: asset.id }]);
      });

      it('asset.assign without --expected-return leaves expected_return_at null in the record and the event', async () => {
        const fx = await Fixtures.create(h);
        const person = await fx.activePerson();
        const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
        await fx.act('asset.assign', { asset: asset.id, person: person.id });
        assert.equal((await fx.api('assets', asset.id)).expected_return_at, null);
        assert.equal((await fx.events())[0]?.data.expected_return_at, null);
      });

      it('asset.assign refuses an asset that is not AVAILABLE, an INACTIVE or unknown person, and bad arguments, changing nothing', async () => {
        const fx = await Fixtures.create(h);
        const person = await fx.activePerson();
        const assigned = await fx.first('assets', (a) => a.status === 'ASSIGNED');
        const available = await fx.first('assets', (a) => a.status === 'AVAILABLE');
        for (const status of ['IN_MAINTENANCE', 'RETIRED', 'LOST']) {
          const other = await fx.first('assets', (a) => a.status === status);
          await fx.refused('asset.assign', { asset: other.id, person: person.id }, 'invalid_state', new RegExp(`is ${status}`));
        }
        await fx.refused(
          'asset.assign',
          { asset: assigned.id, person: person.id },
          'invalid_state',
          /is ASSIGNED to per_.*only an AVAILABLE/,
        );
        const inactive = await fx.activePerson({ status: 'INACTIVE' });
        await fx.refused('asset.assign', { asset: available.id, person: inactive.id }, 'invalid_state', /INACTIVE/);
        await fx.refused('asset.assign', { asset: available.id, person: 'per_doesnotexist' }, 'not_found', /per_doesnotexist/);
        await fx.refused('asset.assign', { asset: 'ast_doesnotexist', person: person.id }, 'not_found');
        await fx.refused('asset.assign', { asset: available.id, person: 'loc_abc' }, 'invalid_parameter', /--person must be an id/);
        await fx.refused('asset.assign', { asset: available.id }, 'invalid_parameter', /--person is required/);
        await fx.refused(
          'asset.assign',
          { asset: available.id, person: person.id, expected_return: 'next week' },
          'invalid_parameter',
          /--expected-return must be an ISO 8601 instant/,
        );
        await fx.refused(
          'asset.assign',
          { asset: available.id, person: person.id, expected_return: iso(h.clock() - 1000) },
          'invalid_parameter',
          /not in the future/,
        );
        await fx.refused(
          'asset.assign',
          { asset: available.id, person: person.id, decision: 'approve' },
          'unknown_parameter',
          /--decision/,
        );
      });

      it('a failure after the first write rolls the whole action back: no record change, no event, no delivery job, no audit entry', async () => {
        const fx = await Fixtures.create(h);
        await fx.endpoint();
        const person = await fx.activePerson();
        // An open transition of the person, broken so that updating it fails validation: the
        // action has by then written the asset and its asset.assigned event.
        const base = await fx.first('transitions', (t) => t.status === 'DRAFT');
        await fx.clone('transitions', base, { person_id: person.id, held_asset_ids: ['not-an-asset-id'] });
        const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
        await fx.refused(
          'asset.assign',
          { asset: asset.id, person: person.id },
          'invalid_state',
          /Transition trn_\w+ would not be valid after this action \(transitions: held_asset_ids\.0 .*\); fix it with wsops correct/,
        );
        assert.equal((await fx.api('assets', asset.id)).status, 'AVAILABLE');
        assert.deepEqual(await fx.events(), []);
        assert.deepEqual(await fx.jobs(), []);
      });
      it('concurrent asset.assign of one asset: exactly one succeeds and emits, the others are refused', async () => {
        const fx = await Fixtures.create(h);
        const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
        const people = [];
        for (let i = 0; i < 5; i++) people.push(await fx.activePerson());
        h.clock.advance(60_000);
        const outcomes = await Promise.allSettled(
          people.map((p) => runAction(h.services, 'asset.assign', fx.ws, { asset: asset.id, person: p.id })),
        );
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        assert.equal(won.length, 1);
        for (const o of outcomes) if (o.status === 'rejected') assert.equal((o.reason as { code?: string }).code, 'invalid_state');
        const events = await fx.events();
        assert.equal(events.length, 1);
        const after = await fx.api('assets', asset.id);
        assert.equal(events[0]?.data.assigned_user_id, after.assigned_user_id);
        assert.equal((after.custody as unknown[]).length, (asset.custody as unknown[]).length + 1);
      });
    });

    describe('asset.return', () => {
      it('asset.return makes an ASSIGNED asset AVAILABLE, closes its custody entry, drops it from open transitions, and emits asset.returned', async () => {
        const fx = await Fixtures.create(h);
        const person = await fx.activePerson();
        const asset = await fx.first('assets', (a) => a.status === 'AVAILABLE');
        const base = await fx.first('transitions', (t) => t.status === 'IN_PROGRESS');
        const open = await fx.clone('transitions', base, { person_id: person.id, held_asset_ids: [] });
        await fx.act('asset.assign', { asset: asset.id, person: person.id, expected_return: iso(h.clock() + 86_400_000 * 10) });
        const assignedAt = iso(h.clock());
        const assigned = await fx.api('assets', asset.id);
        assert.deepEqual((await fx.api('transitions', open.id)).held_asset_ids, [asset.id]);
        const heldBefore = await fx.api('transitions', open.id);

        const result = await fx.act('asset.return', { asset: asset.id });
        const now = h.clock();
        const after = await fx.api('assets', asset.id);
        assert.equal(after.status, 'AVAILABLE');
        assert.equal(after.assigned_user_id, null);
        assert.equal(after.assigned_at, null);
        assert.equal(after.expected_return_at, null);
        assert.deepEqual((after.custody as unknown[]).at(-1), { person_id: person.id, from: assignedAt, to: iso(now) });
        assert.equal((after.custody as unknown[]).length, (asset.custody as unknown[]).length + 1);
        assertMoved(assigned, after, now);
        const trn = await fx.api('transitions', open.id);
        assert.deepEqual(trn.held_asset_ids, []);
        assertMoved(heldBefore, trn, now);

        const events = await fx.events();
        assert.deepEqual(
          events.map((e) => e.type),
          ['asset.assigned', 'asset.returned'],
        );
        assert.deepEqual(result.events, [events[1]?.id]);
        assert.deepEqual(events[1]?.data, {
          asset: { id: asset.id, asset_tag: asset.asset_tag, status: 'AVAILABLE' },
          returned_from_user_id: person.id,
          returned_at: iso(now),
        });
      });

      it('asset.return of a seeded ASSIGNED asset names its holder in returned_from_user_id', async () => {
        const fx = await Fixtures.create(h);
        const asset = await fx.first('assets', (a) => a.status === 'ASSIGNED');
        await fx.act('asset.return', { asset: asset.id });
        assert.equal((await fx.events())[0]?.data.returned_from_user_id, asset.assigned_user_id);
      });

      it('asset.return refuses an asset that is not ASSIGNED, changing nothing', async () => {
        const fx = await Fixtures.create(h);
        for (const status of ['AVAILABLE', 'IN_MAINTENANCE', 'RETIRED', 'LOST']) {
          const asset = await fx.first('assets', (a) => a.status === status);
          await fx.refused('asset.return', { asset: asset.id }, 'invalid_state', new RegExp(`is ${status}; only an ASSIGNED asset`));
        }
      });
    });

    describe('purchase_request.decide', () => {
      /** A SUBMITTED request waiting on the first of three distinct approvers. */
      async function request(fx: Fixtures): Promise<{ prq: Rec; approvers: string[]; requester: string }> {
        const base = await fx.first('purchase-requests', (p) => p.status === 'SUBMITTED');
        const approvers = [(await fx.activePerson()).id, (await fx.activePerson()).id, (await fx.activePerson()).id];
        const requester = (await fx.activePerson()).id;
        const prq = await fx.clone('purchase-requests', base, {
          requester_id: requester,
          status: 'SUBMITTED',
          approvers: approvers.map((person_id, i) => ({ person_id, step: i + 1, decision: 'PENDING', decided_at: null })),
          current_approver_id: approvers[0],
          decided_at: null,
        });
        return { prq, approvers, requester };
      }

      it('purchase_request.decide approve and pass move the request along its approvers without an event; approving the last step makes it APPROVED and emits one purchase_request.decided', async () => {
        const fx = await Fixtures.create(h);
        await fx.endpoint();
        const { prq, approvers } = await request(fx);
        const [a1, a2, a3] = approvers as [string, string, string];

        await fx.act('purchase_request.decide', { request: prq.id, decision: 'approve', approver: a1 });
        const t1 = iso(h.clock());
        let now = await fx.api('purchase-requests', prq.id);
        assert.equal(now.status, 'SUBMITTED');
        assert.equal(now.current_approver_id, a2);
        assert.deepEqual(now.approvers, [
          { person_id: a1, step: 1, decision: 'APPROVED', decided_at: t1 },
          { person_id: a2, step: 2, decision: 'PENDING', decided_at: null },
          { person_id: a3, step: 3, decision: 'PENDING', decided_at: null },
        ]);
        assertMoved(prq, now, Date.parse(t1));

        const beforePass = now;
        const passed = await fx.act('purchase_request.decide', { request: prq.id, decision: 'pass' });
        const t2 = iso(h.clock());
        now = await fx.api('purchase-requests', prq.id);
        assert.equal(now.status, 'SUBMITTED');
        assert.equal(now.current_approver_id, a3);
        assert.deepEqual((now.approvers as unknown[])[1], { person_id: a2, step: 2, decision: 'PASSED', decided_at: t2 });
        assertMoved(beforePass, now, Date.parse(t2));
        assert.deepEqual(passed.events, []);
        assert.deepEqual(await fx.events(), [], 'approving a step and passing emit nothing');

        await fx.refused('purchase_request.decide', { request: prq.id, decision: 'pass' }, 'invalid_state', /last approver step/);
        await fx.refused(
          'purchase_request.decide',
          { request: prq.id, decision: 'approve', approver: a1 },
          'invalid_state',
          new RegExp(`not the current approver.*${a3}`),
        );

        const final = await fx.act('purchase_request.decide', { request: prq.id, decision: 'approve', approver: a3 });
        const t3 = iso(h.clock());
        now = await fx.api('purchase-requests', prq.id);
        assert.equal(now.status, 'APPROVED');
        assert.equal(now.decided_at, t3);
        assert.equal(now.current_approver_id, null);
        assert.deepEqual(
          (now.approvers as { decision: string }[]).map((s) => s.decision),
          ['APPROVED', 'PASSED', 'APPROVED'],
        );
        const events = await fx.events();
        assert.equal(events.length, 1);
        assert.deepEqual(final.events, [events[0]?.id]);
        assert.equal(events[0]?.type, 'purchase_request.decided');
        assert.deepEqual(events[0]?.data, {
          purchase_request: {
            id: prq.id,
            title: prq.title,
            status: 'APPROVED',
            amount_minor: prq.amount_minor,
            currency: prq.currency,
            requester_id: prq.requester_id,
            decided_at: t3,
          },
        });
        assert.equal((await fx.jobs()).length, 1);

        await fx.refused(
          'purchase_request.decide',
          { request: prq.id, decision: 'reject' },
          'invalid_state',
          /is APPROVED; only a SUBMITTED/,
        );
      });

      it('purchase_request.decide reject makes the request REJECTED at any step and emits purchase_request.decided', async () => {
        const fx = await Fixtures.create(h);
        const { prq, approvers } = await request(fx);
        await fx.act('purchase_request.decide', { request: prq.id, decision: 'approve' });
        const result = await fx.act('purchase_request.decide', { request: prq.id, decision: 'reject', approver: approvers[1] });
        const at = iso(h.clock());
        const now = await fx.api('purchase-requests', prq.id);
        assert.equal(now.status, 'REJECTED');
        assert.equal(now.decided_at, at);
        assert.equal(now.current_approver_id, null);
        assert.deepEqual(
          (now.approvers as { decision: string }[]).map((s) => s.decision),
          ['APPROVED', 'REJECTED', 'PENDING'],
        );
        const events = await fx.events();
        assert.deepEqual(
          events.map((e) => [e.type, e.data.purchase_request.status, e.data.purchase_request.decided_at]),
          [['purchase_request.decided', 'REJECTED', at]],
        );
        assert.deepEqual(result.events, [events[0]?.id]);
      });

      it('purchase_request.decide send_back makes the request CHANGES_REQUESTED and withdraw makes it WITHDRAWN, neither emitting an event', async () => {
        const fx = await Fixtures.create(h);
        const sent = await request(fx);
        const r1 = await fx.act('purchase_request.decide', { request: sent.prq.id, decision: 'send_back', approver: sent.approvers[0] });
        const back = await fx.api('purchase-requests', sent.prq.id);
        assert.equal(back.status, 'CHANGES_REQUESTED');
        assert.equal(back.decided_at, null);
        assertMoved(sent.prq, back, h.clock());
        assert.deepEqual(r1.events, []);

        const withdrawn = await request(fx);
        await fx.refused(
          'purchase_request.decide',
          { request: withdrawn.prq.id, decision: 'withdraw', approver: withdrawn.approvers[0] },
          'invalid_state',
          /only its requester/,
        );
        const r2 = await fx.act('purchase_request.decide', {
          request: withdrawn.prq.id,
          decision: 'withdraw',
          approver: withdrawn.requester,
        });
        const gone = await fx.api('purchase-requests', withdrawn.prq.id);
        assert.equal(gone.status, 'WITHDRAWN');
        assert.equal(gone.decided_at, null);
        assert.equal(gone.current_approver_id, null);
        assertMoved(withdrawn.prq, gone, h.clock());
        assert.deepEqual(r2.events, []);
        assert.deepEqual(await fx.events(), []);
        await fx.refused('purchase_request.decide', { request: withdrawn.prq.id, decision: 'approve' }, 'invalid_state', /WITHDRAWN/);
      });

      it('purchase_request.decide refuses requests that are not SUBMITTED, unknown decisions and unknown approvers, changing nothing', async () => {
        const fx = await Fixtures.create(h);
        for (const status of ['DRAFT', 'CHANGES_REQUESTED', 'APPROVED', 'REJECTED', 'WITHDRAWN']) {
          const p = await fx.first('purchase-requests', (r) => r.status === status);
          await fx.refused('purchase_request.decide', { request: p.id, decision: 'approve' }, 'invalid_state', new RegExp(`is ${status}`));
        }
        const { prq } = await request(fx);
        await fx.refused('purchase_request.decide', { request: prq.id, decision: 'maybe' }, 'invalid_parameter', /approve, reject, pass/);
        await fx.refused('purchase_request.decide', { request: prq.id }, 'invalid_parameter', /--decision is required/);
        await fx.refused('purchase_request.decide', { request: prq.id, decision: 'approve', approver: 'per_nobody' }, 'not_found');
      });

      it('purchase_request.decide works on the demo request that waits on the first of several PENDING approvers', async () => {
        const fx = await Fixtures.create(h);
        const prq = await fx.first(
          'purchase-requests',
          (p) => p.status === 'SUBMITTED' && (p.approvers as { decision: string }[]).filter((s) => s.decision === 'PENDING').length >= 2,
        );
        const steps = prq.approvers as { person_id: string; decision: string }[];
        await fx.act('purchase_request.decide', { request: prq.id, decision: 'approve', approver: prq.current_approver_id });
        const after = await fx.api('purchase-requests', prq.id);
        assert.equal(after.status, 'SUBMITTED');
        assert.notEqual(after.current_approver_id, prq.current_approver_id);
        assert.ok(steps.some((s) => s.person_id === after.current_approver_id));
      });
    });

    describe('handover.acknowledge', () => {
      it('handover.acknowledge makes a SENT handover ACKNOWLEDGED with acknowledged_at and emits handover.acknowledged; a second acknowledge is refused', async () => {
        const fx = await Fixtures.create(h);
        const handover = await fx.first('handovers', (x) => x.status === 'SENT');
        const result = await fx.act('handover.acknowledge', { handover: handover.id });
        const now = h.clock();
        const after = await fx.api('handovers', handover.id);
        assert.equal(after.status, 'ACKNOWLEDGED');
        assert.equal(after.acknowledged_at, iso(now));
        assertMoved(handover, after, now);
        const events = await fx.events();
        assert.deepEqual(result.events, [events[0]?.id]);
        assert.equal(events.length, 1);
        assert.equal(events[0]?.type, 'handover.acknowledged');
        assert.deepEqual(events[0]?.data, {
          handover: {
            id: handover.id,
            kind: handover.kind,
            from_person_id: handover.from_person_id,
            recipient_id: handover.recipient_id,
            acknowledged_at: iso(now),
          },
        });
        await fx.refused('handover.acknowledge', { handover: handover.id }, 'invalid_state', /is ACKNOWLEDGED; only a SENT handover/);
        for (const status of ['DRAFT', 'CANCELLED']) {
          const other = await fx.first('handovers', (x) => x.status === status);
          await fx.refused('handover.acknowledge', { handover: other.id }, 'invalid_state', new RegExp(`is ${status}`));
        }
      });
    });

    describe('transition.start', () => {
      it('transition.start makes a DRAFT transition IN_PROGRESS, sends out an OPEN task for each checklist item without one, and emits transition.started', async () => {
        const fx = await Fixtures.create(h);
        const base = await fx.first('transitions', (t) => t.status === 'DRAFT');
        const existingTask = (base.checklist as { task_id: string }[])[0]?.task_id as string;
        const draft = await fx.clone('transitions', base, {
          checklist: [
            { id: 'chk_a', title: 'Collect badge', done: false, task_id: null },
            { id: 'chk_b', title: 'Exit interview', done: false, task_id: existingTask },
            { id: 'chk_c', title: 'Revoke VPN', done: false, task_id: null },
          ],
        });
        const result = await fx.act('transition.start', { transition: draft.id });
        const now = h.clock();
        const after = await fx.api('transitions', draft.id);
        assert.equal(after.status, 'IN_PROGRESS');
        assert.equal(after.started_at, iso(now));
        assert.equal(after.completed_at, null);
        assertMoved(draft, after, now);
        const checklist = after.checklist as { id: string; task_id: string }[];
        assert.equal(checklist[1]?.task_id, existingTask, 'an item that has a task keeps it');
        for (const item of [checklist[0], checklist[2]]) {
          assert.match(item?.task_id ?? '', /^tsk_/);
          const task = await fx.api('tasks', item?.task_id as string);
          assert.equal(task.status, 'OPEN');
          assert.equal(task.source_type, 'TRANSITION');
          assert.equal(task.source_id, draft.id);
          assert.equal(task.location_id, draft.location_id);
          assert.equal(task.created_at, iso(now));
          assert.equal(task.completed_at, null);
        }
        assert.equal(result.records.length, 3, 'two new tasks and the transition');
        const events = await fx.events();
        assert.equal(events.length, 1);
        assert.deepEqual(result.events, [events[0]?.id]);
        assert.equal(events[0]?.type, 'transition.started');
        assert.deepEqual(events[0]?.data, {
          transition: {
            id: draft.id,
            kind: draft.kind,
            person_id: draft.person_id,
            status: 'IN_PROGRESS',
            started_at: iso(now),
            completed_at: null,
          },
        });
        await fx.refused('transition.start', { transition: draft.id }, 'invalid_state', /is IN_PROGRESS; only a DRAFT transition/);
        for (const status of ['COMPLETED', 'CANCELLED']) {
          const other = await fx.first('transitions', (t) => t.status === status);
          await fx.refused('transition.start', { transition: other.id }, 'invalid_state', new RegExp(`is ${status}`));
        }
      });
    });

    describe('transition.complete', () => {
      it("transition.complete of an offboarding returns the person's assets, removes their access, deactivates them, and emits one transition.completed and no asset.returned", async () => {
        const fx = await Fixtures.create(h);
        await fx.endpoint();
        const trn = await fx.first('transitions', (t) => t.kind === 'OFFBOARDING' && t.status === 'IN_PROGRESS');
        const personId = trn.person_id as string;
        const person = await fx.api('people', personId);
        assert.equal(person.status, 'ACTIVE');
        const held = (await fx.all('assets')).filter((a) => a.status === 'ASSIGNED' && a.assigned_user_id === personId);
        const access = (await fx.all('systems')).filter((s) => (s.access as { person_id: string }[]).some((a) => a.person_id === personId));
        assert.ok(held.length >= 1 && access.length >= 1, 'the demo leaver holds assets and access');
        const taskIds = (trn.checklist as { task_id: string | null }[]).map((c) => c.task_id).filter((t): t is string => t !== null);
        const openTasks = [];
        for (const id of taskIds) if ((await fx.api('tasks', id)).status === 'OPEN') openTasks.push(id);
        assert.ok(openTasks.length >= 1, 'the demo offboarding has open tasks');

        const result = await fx.act('transition.complete', { transition: trn.id });
        const now = h.clock();
        const today = iso(now).slice(0, 10);

        const after = await fx.api('transitions', trn.id);
        assert.equal(after.status, 'COMPLETED');
        assert.equal(after.completed_at, iso(now));
        assert.deepEqual(after.held_asset_ids, []);
        assert.deepEqual(after.held_system_ids, []);
        assert.ok((after.checklist as { done: boolean }[]).every((c) => c.done));
        assertMoved(trn, after, now);
        for (const id of openTasks) {
          const task = await fx.api('tasks', id);
          assert.equal(task.status, 'DONE');
          assert.equal(task.completed_at, iso(now));
        }
        for (const asset of held) {
          const a = await fx.api('assets', asset.id);
          assert.equal(a.status, 'AVAILABLE');
          assert.equal(a.assigned_user_id, null);
          assert.ok(
            (a.custody as { to: string | null }[]).every((c) => c.to !== null),
            'custody closed',
          );
          assert.deepEqual((a.custody as unknown[]).at(-1), { ...((asset.custody as object[]).at(-1) as object), to: iso(now) });
          assertMoved(asset, a, now);
        }
        for (const system of access) {
          const s = await fx.api('systems', system.id);
          assert.ok(!(s.access as { person_id: string }[]).some((a) => a.person_id === personId));
          assert.equal((s.access as unknown[]).length, (system.access as unknown[]).length - 1);
          assertMoved(system, s, now);
        }
        const gone = await fx.api('people', personId);
        assert.equal(gone.status, 'INACTIVE');
        const effective = trn.effective_date as string;
        assert.equal(gone.end_date, [effective, today].sort()[0], 'end_date: the effective date, or today if that is earlier');
        assertMoved(person, gone, now);

        const events = await fx.events();
        assert.deepEqual(
          events.map((e) => e.type),
          ['transition.completed'],
          'one transition.completed, no asset.returned',
        );
        assert.deepEqual(result.events, [events[0]?.id]);
        assert.deepEqual(events[0]?.data, {
          transition: {
            id: trn.id,
            kind: 'OFFBOARDING',
            person_id: personId,
            status: 'COMPLETED',
            started_at: trn.started_at,
            completed_at: iso(now),
          },
          returned_asset_ids: held.map((a) => a.id).sort(),
          removed_system_ids: access.map((s) => s.id).sort(),
        });
        assert.equal((await fx.jobs()).length, 1);
        const changed = new Set(result.records.map((r) => r.id));
        for (const id of [trn.id, personId, ...held.map((a) => a.id), ...access.map((s) => s.id), ...openTasks])
          assert.ok(changed.has(id), id);
      });

      it('transition.complete of an onboarding completes it, closes its checklist and tasks, and emits transition.completed without returned or removed ids', async () => {
        const fx = await Fixtures.create(h);
        const trn = await fx.first('transitions', (t) => t.kind === 'ONBOARDING' && t.status === 'IN_PROGRESS');
        const person = await fx.api('people', trn.person_id as string);
        await fx.act('transition.complete', { transition: trn.id });
        const now = h.clock();
        const after = await fx.api('transitions', trn.id);
        assert.equal(after.status, 'COMPLETED');
        assert.ok((after.checklist as { done: boolean }[]).every((c) => c.done));
        assert.deepEqual(after.held_asset_ids, trn.held_asset_ids, 'an onboarding keeps what the joiner holds');
        for (const item of after.checklist as { task_id: string | null }[]) {
          if (item.task_id) assert.notEqual((await fx.api('tasks', item.task_id)).status, 'OPEN');
        }
        assert.deepEqual(await fx.api('people', person.id as string), person, 'a joiner is not deactivated');
        const events = await fx.events();
        assert.equal(events.length, 1);
        assert.deepEqual(events[0]?.data, {
          transition: {
            id: trn.id,
            kind: 'ONBOARDING',
            person_id: trn.person_id,
            status: 'COMPLETED',
            started_at: trn.started_at,
            completed_at: iso(now),
          },
        });
      });

      it('transition.complete refuses a DRAFT, COMPLETED or CANCELLED transition, changing nothing', async () => {
        const fx = await Fixtures.create(h);
        for (const status of ['DRAFT', 'COMPLETED', 'CANCELLED']) {
          const t = await fx.first('transitions', (x) => x.status === status && x.kind === 'OFFBOARDING');
          await fx.refused('transition.complete', { transition: t.id }, 'invalid_state', new RegExp(`is ${status}; only an IN_PROGRESS`));
        }
      });
    });

    describe('learning.acknowledge', () => {
      async function assignment(fx: Fixtures, kind: 'POLICY' | 'COURSE'): Promise<{ lrn: Rec; task: Rec }> {
        const base = await fx.first('learning-assignments', (a) => a.status === 'ASSIGNED');
        const lrn = await fx.clone('learning-assignments', base, { content_kind: kind, status: 'IN_PROGRESS' });
        const taskBase = await fx.first('tasks', (t) => t.status === 'OPEN');
        const task = await fx.clone('tasks', taskBase, {
          source_type: 'LEARNING_ASSIGNMENT',
          source_id: lrn.id,
          status: 'OPEN',
          completed_at: null,
        });
        return { lrn, task };
      }

      it('learning.acknowledge completes a POLICY as ACKNOWLEDGED by default, closes its open task, and emits learning.acknowledged', async () => {
        const fx = await Fixtures.create(h);
        const { lrn, task } = await assignment(fx, 'POLICY');
        const result = await fx.act('learning.acknowledge', { assignment: lrn.id });
        const now = h.clock();
        const after = await fx.api('learning-assignments', lrn.id);
        assert.equal(after.status, 'COMPLETED');
        assert.equal(after.completion_method, 'ACKNOWLEDGED');
        assert.equal(after.completed_at, iso(now));
        assert.equal(after.recorded_by_id, null);
        assert.equal(after.score, null);
        assertMoved(lrn, after, now);
        const closed = await fx.api('tasks', task.id);
        assert.equal(closed.status, 'DONE');
        assert.equal(closed.completed_at, iso(now));
        const events = await fx.events();
        assert.deepEqual(result.events, [events[0]?.id]);
        assert.equal(events[0]?.type, 'learning.acknowledged');
        assert.deepEqual(events[0]?.data, {
          learning_assignment: {
            id: lrn.id,
            person_id: lrn.person_id,
            content_id: lrn.content_id,
            content_title: lrn.content_title,
            completion_method: 'ACKNOWLEDGED',
            completed_at: iso(now),
            recorded_by_id: null,
          },
        });
        await fx.refused('learning.acknowledge', { assignment: lrn.id }, 'invalid_state', /is COMPLETED/);
      });

      it('learning.acknowledge passes a COURSE by default, with a score from 0 to 100', async () => {
        const fx = await Fixtures.create(h);
        const { lrn } = await assignment(fx, 'COURSE');
        await fx.refused(
          'learning.acknowledge',
          { assignment: lrn.id, score: 101 },
          'invalid_parameter',
          /--score must be a whole number from 0 to 100/,
        );
        await fx.refused(
          'learning.acknowledge',
          { assignment: lrn.id, method: 'acknowledged' },
          'invalid_parameter',
          /passed, not acknowledged/,
        );
        await fx.act('learning.acknowledge', { assignment: lrn.id, score: '87' });
        const after = await fx.api('learning-assignments', lrn.id);
        assert.equal(after.completion_method, 'PASSED');
        assert.equal(after.score, 87);
        assert.equal((await fx.events())[0]?.data.learning_assignment.completion_method, 'PASSED');
      });

      it('learning.acknowledge recorded_on_behalf needs an existing recorded_by and names it in the record and the event', async () => {
        const fx = await Fixtures.create(h);
        const { lrn } = await assignment(fx, 'POLICY');
        const recorder = await fx.activePerson();
        await fx.refused(
          'learning.acknowledge',
          { assignment: lrn.id, method: 'recorded_on_behalf' },
          'invalid_parameter',
          /needs recorded_by/,
        );
        await fx.refused(
          'learning.acknowledge',
          { assignment: lrn.id, method: 'recorded_on_behalf', recorded_by: 'per_ghost' },
          'not_found',
          /per_ghost/,
        );
        await fx.refused(
          'learning.acknowledge',
          { assignment: lrn.id, recorded_by: recorder.id },
          'invalid_parameter',
          /recorded_on_behalf method only/,
        );
        await fx.refused(
          'learning.acknowledge',
          { assignment: lrn.id, method: 'passed', score: 90 },
          'invalid_parameter',
          /acknowledged, not passed/,
        );
        await fx.refused(
          'learning.acknowledge',
          { assignment: lrn.id, score: 90 },
          'invalid_parameter',
          /score goes with the passed method only/,
        );
        await fx.act('learning.acknowledge', { assignment: lrn.id, method: 'recorded_on_behalf', recorded_by: recorder.id });
        const after = await fx.api('learning-assignments', lrn.id);
        assert.equal(after.completion_method, 'RECORDED_ON_BEHALF');
        assert.equal(after.recorded_by_id, recorder.id);
        const data = (await fx.events())[0]?.data.learning_assignment;
        assert.equal(data.completion_method, 'RECORDED_ON_BEHALF');
        assert.equal(data.recorded_by_id, recorder.id);
      });
    });

    describe('workspace and modules', () => {
      it('an action on a workspace without the module, or on an unknown workspace, is refused', async () => {
        const fx = await Fixtures.create(h, { modules: 'assets' });
        const sent = (await fx.all('handovers')).find((x) => x.status === 'SENT');
        await assert.rejects(
          fx.act('handover.acknowledge', { handover: sent?.id ?? 'hnd_x' }),
          (err: Error & { code?: string }) => err.code === 'not_found' && /handovers module/.test(err.message),
        );
        await assert.rejects(
          runAction(h.services, 'asset.return', 'wsp_nowhere', { asset: 'ast_x' }),
          (err: Error & { code?: string }) => err.code === 'not_found' && /no workspace wsp_nowhere/.test(err.message),
        );
        await assert.rejects(
          fx.act('asset.explode', {}),
          (err: Error & { code?: string }) =>
            err.code === 'not_found' && /unknown action "asset.explode"; actions are: asset.assign/.test(err.message),
        );
      });
    });
  });
}
