/**
 * The demo-data generator (CONTRACT "Demo data"): deterministic, valid against every register's
 * schema, referentially whole, and showing every case the demo promises. Runs once per dialect.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { loadConfig } from '../src/config.js';
import { AppError } from '../src/errors.js';
import { REGISTERS, type Register, registerByPath } from '../src/registers/catalogue.js';
import type { Field } from '../src/registers/fields.js';
import { scaleForAssets, seedRegister, seedWorkspace } from '../src/seed/seed.js';
import { createServices, type Services } from '../src/services.js';
import { createWorkspace, parseModules } from '../src/workspaces/workspaces.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from './helpers/databases.js';

const NOW = Date.parse('2026-11-22T08:00:00.000Z');
const DAY = 86_400_000;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON documents
type Doc = Record<string, any>;
type Records = Map<string, Doc[]>;

const ajv = new Ajv2020.default({ allErrors: true, strict: false });
addFormats.default(ajv);
const validators = new Map(REGISTERS.map((r) => [r.path, ajv.compile(r.recordSchema())]));
const registerByPrefix = new Map(REGISTERS.map((r) => [r.idPrefix, r]));

async function open(url: string): Promise<Services> {
  return createServices(loadConfig({ WSOPS_DATABASE_URL: url, WSOPS_SECRET: 'x'.repeat(32) }));
}

async function newWorkspace(services: Services, name: string): Promise<string> {
  const ws = await createWorkspace(services.database.db, name, parseModules('all'), new Date(NOW).toISOString());
  return ws.id;
}

async function readAll(services: Services, workspaceId: string, register?: string): Promise<Records> {
  let query = services.database.db.selectFrom('records').select(['register', 'doc']).where('workspace_id', '=', workspaceId);
  if (register) query = query.where('register', '=', register);
  const out: Records = new Map(REGISTERS.map((r) => [r.path, []]));
  for (const row of await query.execute()) out.get(row.register)?.push(JSON.parse(row.doc) as Doc);
  for (const docs of out.values()) docs.sort((a, b) => (a.id < b.id ? -1 : 1));
  return out;
}

function all(records: Records, path: string): Doc[] {
  return records.get(path) ?? [];
}

/** Every value an enum field takes, including enum fields inside list items. */
function enumValues(register: Register, docs: readonly Doc[]): Map<string, { field: Field; seen: Set<unknown> }> {
  const out = new Map<string, { field: Field; seen: Set<unknown> }>();
  const visit = (prefix: string, fields: Readonly<Record<string, Field>>, values: readonly Doc[]) => {
    for (const [name, field] of Object.entries(fields)) {
      if (field.kind === 'enum') out.set(`${prefix}${name}`, { field, seen: new Set(values.map((v) => v[name])) });
      if (field.kind === 'list' && field.of)
        visit(
          `${prefix}${name}[].`,
          field.of,
          values.flatMap((v) => v[name] as Doc[]),
        );
    }
  };
  visit('', register.allFields, docs);
  return out;
}

/** Every (path, id, expected register) reference held by `doc`, through list items too. */
function references(fields: Readonly<Record<string, Field>>, doc: Doc, at: string): { at: string; id: string; ref: string }[] {
  const out: { at: string; id: string; ref: string }[] = [];
  for (const [name, field] of Object.entries(fields)) {
    const value = doc[name];
    if (field.kind === 'id' && field.ref && value !== null) out.push({ at: `${at}.${name}`, id: value, ref: field.ref });
    if (field.kind === 'ids' && field.ref) for (const id of value as string[]) out.push({ at: `${at}.${name}`, id, ref: field.ref });
    if (field.kind === 'list' && field.of) {
      for (const [i, item] of (value as Doc[]).entries()) out.push(...references(field.of, item, `${at}.${name}[${i}]`));
    }
  }
  return out;
}

const today = Date.UTC(2026, 10, 22);
const dateMs = (date: string) => Date.parse(`${date}T00:00:00.000Z`);

for (const dialect of DIALECTS) {
  describe(`seed (${dialect})`, () => {
    let db: TestDatabase;
    let services: Services;
    let ws: string;
    let other: string;
    let records: Records;
    let byId: Map<string, Doc>;
    let result: Awaited<ReturnType<typeof seedWorkspace>>;
    const progress: [number, number][] = [];

    before(async () => {
      db = await createTestDatabase(dialect);
      services = await open(db.url);
      ws = await newWorkspace(services, 'Seeded');
      other = await newWorkspace(services, 'Other');
      result = await seedWorkspace(services, ws, { scale: 1, seed: 'demo', now: NOW, onProgress: (d, t) => progress.push([d, t]) });
      await seedWorkspace(services, other, { scale: 1, seed: 'demo', now: NOW });
      records = await readAll(services, ws);
      byId = new Map([...records.values()].flat().map((d) => [d.id as string, d]));
    });

    after(async () => {
      await services?.close();
      await db?.drop();
    });

    it('writes a small complete picture: every register, 300 to 600 records, counts as reported', () => {
      const stored = [...records.values()].reduce((n, docs) => n + docs.length, 0);
      assert.equal(result.total, stored);
      assert.ok(stored >= 300 && stored <= 600, `scale 1 has ${stored} records`);
      for (const r of REGISTERS) {
        assert.ok(all(records, r.path).length > 0, `${r.path} has records`);
        assert.equal(result.counts[r.path], all(records, r.path).length, r.path);
      }
      assert.deepEqual(progress.at(-1), [stored, stored]);
    });

    it('every record validates against its register schema, with every declared field present', () => {
      for (const r of REGISTERS) {
        const validate = validators.get(r.path)!;
        for (const doc of all(records, r.path)) {
          assert.ok(validate(doc), `${r.path} ${doc.id}: ${ajv.errorsText(validate.errors)}`);
          assert.deepEqual(Object.keys(doc), Object.keys(r.allFields));
        }
      }
    });

    it('every enumeration value of every register appears at least once', () => {
      for (const r of REGISTERS) {
        for (const [name, { field, seen }] of enumValues(r, all(records, r.path))) {
          for (const value of field.values ?? []) assert.ok(seen.has(value), `${r.path}.${name} has no ${value}`);
        }
      }
    });

    it('every reference points to an existing record of the right register', () => {
      for (const r of REGISTERS) {
        for (const doc of all(records, r.path)) {
          for (const ref of references(r.allFields, doc, `${r.path}/${doc.id}`)) {
            const target = registerByPrefix.get(ref.ref);
            if (!target) continue; // `cnt_` content ids live outside the registers
            assert.equal(byId.get(ref.id)?.id, ref.id, `${ref.at} -> ${ref.id} exists`);
            assert.ok(
              all(records, target.path).some((d) => d.id === ref.id),
              `${ref.at} is a ${target.path} record`,
            );
          }
        }
      }
      const sourceRegister = { HANDOVER: 'handovers', LEARNING_ASSIGNMENT: 'learning-assignments', TRANSITION: 'transitions' } as const;
      for (const task of all(records, 'tasks')) {
        const source = byId.get(task.source_id);
        assert.ok(source, `task ${task.id} source exists`);
        assert.ok(all(records, sourceRegister[task.source_type as keyof typeof sourceRegister]).includes(source!));
      }
    });

    it('timestamps are ISO with milliseconds, created <= updated <= now, updated spread over the past year', () => {
      let recent = 0;
      let total = 0;
      for (const doc of byId.values()) {
        assert.match(doc.created_at, TIMESTAMP);
        assert.match(doc.updated_at, TIMESTAMP);
        const updated = Date.parse(doc.updated_at);
        assert.ok(Date.parse(doc.created_at) <= updated, `${doc.id} created <= updated`);
        assert.ok(updated <= NOW && updated >= NOW - 366 * DAY, `${doc.id} updated within the year before now`);
        total++;
        if (updated > NOW - 3.65 * DAY) recent++;
      }
      assert.ok(recent / total < 0.04, `${recent} of ${total} records changed in the last 3.65 days`);
    });

    it('ids differ between workspaces; the same inputs give the same records', async () => {
      const otherRecords = await readAll(services, other);
      const otherIds = new Set([...otherRecords.values()].flat().map((d) => d.id));
      for (const id of byId.keys()) assert.ok(!otherIds.has(id), `${id} appears in both workspaces`);
      // Same plan, other draws: only the number of tasks (handover items) may differ.
      for (const r of REGISTERS) if (r.path !== 'tasks') assert.equal(all(otherRecords, r.path).length, all(records, r.path).length);

      // The same workspace id in a second database: byte-identical documents.
      const copy = await createTestDatabase(dialect);
      const again = await open(copy.url);
      try {
        await again.database.db
          .insertInto('workspaces')
          .values({ id: ws, name: 'Seeded', modules: parseModules('all').join(' '), created_at: new Date(NOW).toISOString() })
          .execute();
        await seedWorkspace(again, ws, { scale: 1, seed: 'demo', now: NOW });
        const copied = await readAll(again, ws);
        for (const r of REGISTERS) assert.deepEqual(all(copied, r.path), all(records, r.path), r.path);
      } finally {
        await again.close();
        await copy.drop();
      }
    });

    it('refuses to seed a workspace twice, and checks its options', async () => {
      await assert.rejects(
        seedWorkspace(services, ws, { scale: 1, seed: 'demo', now: NOW }),
        (e: unknown) => (e as AppError).code === 'conflict',
      );
      await assert.rejects(seedWorkspace(services, ws, { scale: 0, seed: 'demo', now: NOW }), AppError);
      await assert.rejects(seedWorkspace(services, 'wsp_missing', { scale: 1, seed: 'demo', now: NOW }), AppError);
    });

    it('people sit at several sites and in several teams, with managers', () => {
      const people = all(records, 'people');
      const sites = new Set(people.map((p) => p.location_id));
      const teams = new Set(people.map((p) => p.team_id).filter(Boolean));
      assert.ok(sites.size >= 3 && teams.size >= 6, `${sites.size} sites, ${teams.size} teams`);
      for (const p of people) {
        assert.equal(byId.get(p.location_id)?.kind, 'SITE');
        if (p.team_id) {
          const team = byId.get(p.team_id)!;
          assert.equal(team.kind, 'TEAM');
          assert.equal(byId.get(team.parent_id)?.parent_id, p.location_id, `${p.id}'s team is at their site`);
        }
        assert.equal(p.status === 'INACTIVE', p.end_date !== null && dateMs(p.end_date) <= today, `${p.id} status and end date`);
        assert.match(p.work_email, /^[a-z0-9.]+@[a-z]+\.example$/);
      }
      assert.ok(people.filter((p) => p.manager_id).length >= people.length - 1);
      const emails = people.map((p) => p.work_email);
      assert.equal(new Set(emails).size, emails.length, 'work emails are unique');
    });

    it('assets: custody agrees with status; one ASSIGNED and several AVAILABLE; holders are active', () => {
      const assets = all(records, 'assets');
      assert.ok(assets.filter((a) => a.status === 'ASSIGNED').length >= 1);
      assert.ok(assets.filter((a) => a.status === 'AVAILABLE').length >= 3);
      const tags = assets.map((a) => a.asset_tag);
      assert.equal(new Set(tags).size, tags.length);
      for (const a of assets) {
        assert.match(a.asset_tag, /^AST-\d{6}$/);
        const open = a.custody.filter((c: Doc) => c.to === null);
        if (a.status === 'ASSIGNED') {
          assert.ok(a.assigned_user_id && a.assigned_at, `${a.id} assigned fields`);
          assert.equal(open.length, 1);
          assert.equal(open[0].person_id, a.assigned_user_id);
          assert.equal(open[0].from, a.assigned_at);
          assert.equal(a.custody.at(-1), open[0]);
          assert.equal(byId.get(a.assigned_user_id)?.status, 'ACTIVE');
        } else {
          assert.equal(a.assigned_user_id, null);
          assert.equal(a.assigned_at, null);
          assert.equal(a.expected_return_at, null);
          assert.equal(open.length, 0);
        }
        for (const c of a.custody) assert.ok(c.to === null || c.from <= c.to);
        for (let i = 1; i < a.custody.length; i++) assert.ok(a.custody[i - 1].to <= a.custody[i].from, `${a.id} custody in order`);
      }
    });

    it('transitions: an open offboarding whose subject holds assets and access; held ids are exact', () => {
      const assets = all(records, 'assets');
      const systems = all(records, 'systems');
      const transitions = all(records, 'transitions');
      const demo = transitions.find(
        (t) =>
          t.kind === 'OFFBOARDING' &&
          ['DRAFT', 'IN_PROGRESS'].includes(t.status) &&
          t.held_asset_ids.length > 0 &&
          t.held_system_ids.length > 0,
      );
      assert.ok(demo, 'an open offboarding with holdings');
      assert.equal(byId.get(demo.person_id)?.status, 'ACTIVE');
      assert.equal(new Set(transitions.map((t) => t.person_id)).size, transitions.length, 'one transition per person');
      for (const t of transitions) {
        const holds = assets.filter((a) => a.status === 'ASSIGNED' && a.assigned_user_id === t.person_id).map((a) => a.id);
        const access = systems.filter((s) => s.access.some((x: Doc) => x.person_id === t.person_id)).map((s) => s.id);
        assert.deepEqual([...t.held_asset_ids].sort(), holds.sort(), `${t.id} held assets`);
        assert.deepEqual([...t.held_system_ids].sort(), access.sort(), `${t.id} held systems`);
        const person = byId.get(t.person_id)!;
        if (t.kind === 'OFFBOARDING' && t.status === 'COMPLETED') {
          assert.equal(person.status, 'INACTIVE');
          assert.equal(person.end_date, t.effective_date);
        }
        assert.equal(t.completed_at !== null, t.status === 'COMPLETED');
        assert.equal(t.started_at === null, t.status === 'DRAFT' || (t.status === 'CANCELLED' && t.started_at === null));
        for (const item of t.checklist) {
          const task = byId.get(item.task_id)!;
          assert.equal(task.source_id, t.id);
          assert.equal(item.done, task.status === 'DONE', `${t.id} checklist item and task agree`);
          if (t.status === 'COMPLETED') assert.ok(item.done);
          if (t.status === 'CANCELLED' && !item.done) assert.equal(task.status, 'CANCELLED');
        }
      }
    });

    it('nobody inactive holds an asset or an access', () => {
      const inactive = new Set(
        all(records, 'people')
          .filter((p) => p.status === 'INACTIVE')
          .map((p) => p.id),
      );
      assert.ok(inactive.size > 0);
      for (const a of all(records, 'assets')) assert.ok(!inactive.has(a.assigned_user_id));
      for (const s of all(records, 'systems')) for (const x of s.access) assert.ok(!inactive.has(x.person_id), `${s.id} access`);
    });

    it('purchase requests: approver decisions agree with the status; one SUBMITTED waits on two or more', () => {
      const requests = all(records, 'purchase-requests');
      assert.ok(requests.some((r) => r.status === 'SUBMITTED' && r.approvers.filter((a: Doc) => a.decision === 'PENDING').length >= 2));
      for (const r of requests) {
        const decisions = r.approvers.map((a: Doc) => a.decision);
        assert.deepEqual(
          r.approvers.map((a: Doc) => a.step),
          r.approvers.map((_: Doc, i: number) => i + 1),
        );
        assert.equal(new Set(r.approvers.map((a: Doc) => a.person_id)).size, r.approvers.length);
        assert.ok(r.approvers.every((a: Doc) => a.person_id !== r.requester_id));
        for (const a of r.approvers) assert.equal(a.decision === 'PENDING', a.decided_at === null);
        const firstPending = r.approvers.find((a: Doc) => a.decision === 'PENDING');
        assert.equal(r.current_approver_id, r.status === 'SUBMITTED' ? firstPending?.person_id : null, `${r.id} current approver`);
        assert.equal(r.decided_at !== null, r.status === 'APPROVED' || r.status === 'REJECTED');
        if (r.status === 'APPROVED') {
          assert.ok(decisions.every((d: string) => d === 'APPROVED' || d === 'PASSED'));
          assert.equal(decisions.at(-1), 'APPROVED');
          assert.equal(r.decided_at, r.approvers.at(-1).decided_at);
        }
        if (r.status === 'REJECTED') assert.equal(decisions.filter((d: string) => d === 'REJECTED').length, 1);
        else assert.ok(!decisions.includes('REJECTED'));
        if (r.status === 'DRAFT') assert.ok(decisions.every((d: string) => d === 'PENDING'));
        // Decisions are taken in step order.
        const decided = r.approvers.filter((a: Doc) => a.decided_at !== null);
        assert.deepEqual(decided, r.approvers.slice(0, decided.length));
      }
    });

    it('handovers: a SENT one; items refer to their own tasks; acknowledgement agrees with status', () => {
      const handovers = all(records, 'handovers');
      assert.ok(handovers.some((h) => h.status === 'SENT'));
      for (const h of handovers) {
        assert.notEqual(h.from_person_id, h.recipient_id);
        assert.equal(h.acknowledged_at !== null, h.status === 'ACKNOWLEDGED');
        for (const item of h.items) {
          if (h.status === 'DRAFT') assert.equal(item.task_id, null);
          else assert.equal(byId.get(item.task_id)?.source_id, h.id);
        }
      }
    });

    it('learning assignments: some not completed; completion evidence agrees with status and kind', () => {
      const learning = all(records, 'learning-assignments');
      assert.ok(learning.some((l) => l.status !== 'COMPLETED'));
      for (const l of learning) {
        const completed = l.status === 'COMPLETED';
        assert.equal(l.completed_at !== null, completed);
        assert.equal(l.completion_method !== null, completed);
        assert.equal(l.score !== null, l.completion_method === 'PASSED');
        assert.equal(l.recorded_by_id !== null, l.completion_method === 'RECORDED_ON_BEHALF');
        if (l.recorded_by_id) assert.notEqual(l.recorded_by_id, l.person_id);
        if (l.completion_method === 'ACKNOWLEDGED') assert.equal(l.content_kind, 'POLICY');
        if (l.completion_method === 'PASSED') assert.equal(l.content_kind, 'COURSE');
        const tasks = all(records, 'tasks').filter((t) => t.source_id === l.id);
        assert.equal(tasks.length, 1);
        assert.equal(tasks[0]!.status, completed ? 'DONE' : 'OPEN');
      }
    });

    it('vendors: deadlines derived from renewal and notice; renewals near and far', () => {
      const vendors = all(records, 'vendors');
      for (const v of vendors) {
        if (v.renewal_date === null) assert.equal(v.cancellation_deadline, null);
        else assert.equal(dateMs(v.cancellation_deadline), dateMs(v.renewal_date) - v.notice_period_days * DAY, v.id);
        if (v.seats_purchased !== null) assert.ok(v.seats_assigned <= v.seats_purchased);
        assert.ok(v.contract_start_date <= '2026-11-22');
      }
      const active = vendors.filter((v) => v.status === 'ACTIVE' && v.cancellation_deadline);
      const inDays = (v: Doc) => (dateMs(v.cancellation_deadline) - today) / DAY;
      assert.ok(
        active.some((v) => inDays(v) >= 0 && inDays(v) <= 30),
        'a cancellation deadline within 30 days',
      );
      assert.ok(
        active.some((v) => inDays(v) > 60),
        'a renewal far away',
      );
      assert.ok(vendors.some((v) => v.auto_renews) && vendors.some((v) => !v.auto_renews));
    });

    it('seedRegister bulk-adds assets in batches, referring to real active people, tags continuing', async () => {
      const calls: [number, number][] = [];
      const n = 8_000;
      const res = await seedRegister(services, ws, 'assets', n, { seed: 'bulk', now: NOW, onProgress: (d, t) => calls.push([d, t]) });
      assert.deepEqual(res.counts, { assets: n });
      assert.deepEqual(
        calls.map(([d]) => d),
        [5000, 8000],
      );
      assert.ok(calls.every(([, t]) => t === n));
      const stored = all(await readAll(services, ws, 'assets'), 'assets');
      assert.equal(stored.length, all(records, 'assets').length + n);
      assert.equal(new Set(stored.map((a) => a.asset_tag)).size, stored.length, 'tags stay unique');
      const subjects = new Set(all(records, 'transitions').map((t) => t.person_id));
      const validate = validators.get('assets')!;
      let recent = 0;
      for (const a of stored) {
        assert.ok(validate(a), ajv.errorsText(validate.errors));
        if (a.assigned_user_id) {
          assert.equal(byId.get(a.assigned_user_id)?.status, 'ACTIVE');
          if (!byId.has(a.id)) assert.ok(!subjects.has(a.assigned_user_id), 'bulk assets leave transition subjects alone');
        }
        for (const c of a.custody) assert.ok(byId.has(c.person_id));
        if (a.location_id) assert.equal(byId.get(a.location_id)?.kind, 'SITE');
        if (Date.parse(a.updated_at) > NOW - 3.65 * DAY) recent++;
      }
      assert.ok(recent > 0.005 * stored.length && recent < 0.02 * stored.length, `${recent} of ${stored.length} recent`);
      // A second call adds more with fresh ids.
      const more = await seedRegister(services, ws, 'assets', 10, { seed: 'bulk', now: NOW });
      assert.equal(more.total, 10);
    });

    it('seedRegister brings tasks with handovers and learning, fills an empty workspace, refuses task-only registers', async () => {
      const res = await seedRegister(services, other, 'handovers', 50, { seed: 'bulk', now: NOW });
      assert.equal(res.counts.handovers, 50);
      const after = await readAll(services, other);
      const ids = new Set([...after.values()].flat().map((d) => d.id));
      for (const h of all(after, 'handovers')) for (const item of h.items) assert.ok(item.task_id === null || ids.has(item.task_id));
      assert.equal(res.total, 50 + (res.counts.tasks ?? 0));

      const empty = await newWorkspace(services, 'Empty');
      const filled = await seedRegister(services, empty, 'learning-assignments', 20, { seed: 'bulk', now: NOW });
      assert.ok((filled.counts.people ?? 0) > 0 && (filled.counts.locations ?? 0) > 0);
      assert.equal(filled.counts.tasks, 20);
      const emptyRecords = await readAll(services, empty);
      const emptyIds = new Set([...emptyRecords.values()].flat().map((d) => d.id));
      for (const r of REGISTERS) {
        for (const doc of all(emptyRecords, r.path)) {
          assert.ok(validators.get(r.path)!(doc));
          for (const ref of references(r.allFields, doc, doc.id))
            if (registerByPrefix.has(ref.ref)) assert.ok(emptyIds.has(ref.id), ref.at);
        }
      }
      // Bulk assignments name the same content ids as the workspace's own.
      await seedRegister(services, ws, 'learning-assignments', 30, { seed: 'other', now: NOW });
      const contentIds = new Map<string, Set<string>>();
      for (const l of all(await readAll(services, ws, 'learning-assignments'), 'learning-assignments')) {
        contentIds.set(l.content_title, (contentIds.get(l.content_title) ?? new Set()).add(l.content_id));
      }
      for (const [title, ids] of contentIds) assert.equal(ids.size, 1, title);

      await assert.rejects(seedRegister(services, ws, 'tasks', 10, { seed: 'bulk', now: NOW }), AppError);
      assert.ok(registerByPath('tasks'));
    });

    it('scaleForAssets sizes a seed by its asset count', () => {
      assert.equal(scaleForAssets(1_000_000) * 80, 1_000_000);
    });
  });
}
