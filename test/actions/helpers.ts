/** Shared fixtures of the domain-action tests: seeded records, direct writes, events and snapshots. */
import assert from 'node:assert/strict';
import { runAction } from '../../src/actions/domain/index.js';
import { newId } from '../../src/ids.js';
import { READ_SCOPES, type Register, registerByPath } from '../../src/registers/catalogue.js';
import { SUBSCRIBABLE_EVENTS } from '../../src/webhooks/events/event-types.js';
import type { RecordObject } from '../../src/writes/records.js';
import type { Harness } from '../helpers/harness.js';

export type Rec = RecordObject & { id: string };

export interface StoredEvent {
  id: string;
  type: string;
  created: string;
  api_version: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  data: any;
}

export function register(path: string): Register {
  const r = registerByPath(path);
  if (!r) throw new Error(`no register ${path}`);
  return r;
}

export class Fixtures {
  constructor(
    readonly h: Harness,
    readonly ws: string,
    readonly key: string,
  ) {}

  static async create(h: Harness, options: { modules?: string } = {}): Promise<Fixtures> {
    const ws = await h.workspace(options);
    const { key } = await h.key(ws);
    return new Fixtures(h, ws, key);
  }

  /** Every stored record of a register, in id order. */
  async all(path: string): Promise<Rec[]> {
    const rows = await this.h.services.database.db
      .selectFrom('records')
      .select('doc')
      .where('workspace_id', '=', this.ws)
      .where('register', '=', path)
      .orderBy('id')
      .execute();
    return rows.map((r) => JSON.parse(r.doc) as Rec);
  }

  async first(path: string, where: (r: Rec) => boolean): Promise<Rec> {
    const found = (await this.all(path)).find(where);
    assert.ok(found, `the demo data has a ${path} record that fits`);
    return found;
  }

  /** A record through the public API (so its shape is the served one). */
  async api(path: string, id: string): Promise<Rec> {
    const res = await this.h.get(`/api/v1/${path}/${id}`, this.key);
    assert.equal(res.status, 200, res.body);
    return res.json as Rec;
  }

  /** Writes a record directly (no validation, no event): a fixture, or a deliberately broken record. */
  async put(path: string, record: Rec): Promise<Rec> {
    await this.h.services.records.put(this.ws, register(path), record);
    return record;
  }

  /** A copy of `base` under a new id with `changes`, written directly. */
  async clone(path: string, base: Rec, changes: Partial<Rec> = {}): Promise<Rec> {
    const at = new Date(this.h.clock() - 86_400_000).toISOString();
    return this.put(path, { ...base, id: newId(register(path).idPrefix), created_at: at, updated_at: at, ...changes } as Rec);
  }

  /** An ACTIVE person (a clone, so tests never compete for one). */
  async activePerson(changes: Partial<Rec> = {}): Promise<Rec> {
    const base = await this.first('people', (p) => p.status === 'ACTIVE');
    return this.clone('people', base, { status: 'ACTIVE', end_date: null, ...changes });
  }

  /** An active webhook endpoint subscribed to every event, so each event gets one delivery job. */
  async endpoint(): Promise<string> {
    const id = newId('we');
    const at = new Date(this.h.clock()).toISOString();
    await this.h.services.database.db
      .insertInto('webhook_endpoints')
      .values({
        id,
        workspace_id: this.ws,
        url: 'https://hooks.example.com/wsops',
        scopes: READ_SCOPES.join(' '),
        events: SUBSCRIBABLE_EVENTS.join(' '),
        status: 'active',
        disabled_reason: null,
        secret_ciphertext: 'unused-in-these-tests',
        previous_secret_ciphertext: null,
        previous_secret_expires_at: null,
        consecutive_failures: 0,
        last_failure: null,
        created_at: at,
        updated_at: at,
        verified_at: at,
        disabled_at: null,
        standard_webhooks: 0,
      })
      .execute();
    return id;
  }

  /** The workspace's events, oldest first, parsed from the exact body deliveries send. */
  async events(): Promise<StoredEvent[]> {
    const rows = await this.h.services.database.db
      .selectFrom('events')
      .select(['id', 'type', 'body'])
      .where('workspace_id', '=', this.ws)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => {
      const body = JSON.parse(r.body) as StoredEvent;
      assert.deepEqual(Object.keys(body), ['id', 'type', 'created', 'api_version', 'data']);
      assert.match(body.id, /^evt_[A-Za-z0-9]+$/);
      assert.equal(body.id, r.id);
      assert.equal(body.type, r.type);
      assert.equal(body.api_version, '1');
      assert.match(body.created, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      return body;
    });
  }

  async jobs(): Promise<{ event_id: string; endpoint_id: string; state: string }[]> {
    return this.h.services.database.db
      .selectFrom('delivery_jobs')
      .select(['event_id', 'endpoint_id', 'state'])
      .where('workspace_id', '=', this.ws)
      .execute();
  }

  async audit(): Promise<{ actor: string; action: string; target: string | null }[]> {
    return this.h.services.database.db
      .selectFrom('audit_events')
      .select(['actor', 'action', 'target'])
      .where('workspace_id', '=', this.ws)
      .where('action', 'like', 'action.%')
      .orderBy('seq')
      .execute();
  }

  /** Everything an action could change: every record, event, delivery job and action audit entry. */
  async snapshot(): Promise<string> {
    const db = this.h.services.database.db;
    const records = await db.selectFrom('records').select(['id', 'doc']).where('workspace_id', '=', this.ws).orderBy('id').execute();
    return JSON.stringify({ records, events: await this.events(), jobs: await this.jobs(), audit: await this.audit() });
  }

  /** Runs an action a minute after the previous one, so `updated_at` visibly moves. */
  act(name: string, args: Record<string, unknown>, actor: 'cli' | 'operator' = 'cli') {
    this.h.clock.advance(60_000);
    return runAction(this.h.services, name, this.ws, args, { actor });
  }

  /** Runs an action that must be refused with `code` (and a message matching `reason`), and checks nothing changed. */
  async refused(name: string, args: Record<string, unknown>, code: string, reason?: RegExp): Promise<void> {
    const before = await this.snapshot();
    await assert.rejects(this.act(name, args), (err: Error & { code?: string }) => {
      assert.equal(err.code, code, err.message);
      if (reason) assert.match(err.message, reason);
      return true;
    });
    assert.equal(await this.snapshot(), before, `a refused ${name} changes nothing`);
  }
}

/** `updated_at` moved forward, and is now the action's stamp or later. */
export function assertMoved(before: Rec, after: Rec, now: number): void {
  assert.ok(
    (after.updated_at as string) > (before.updated_at as string),
    `${before.id}: updated_at moved (${before.updated_at} -> ${after.updated_at})`,
  );
  assert.ok(Date.parse(after.updated_at as string) >= now, `${before.id}: updated_at is the action's time or later`);
  assert.equal(after.created_at, before.created_at, `${before.id}: created_at unchanged`);
}
