/** The audit trail: filters by kind and actor, keyset paging, workspace isolation, and `wsops audit`. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { AUDIT_KINDS, auditKindOf, auditPage, listAudit, recordAudit } from '../../src/audit/audit.js';
import { AUDIT_WORDS, describeAudit } from '../../src/audit-words.js';
import { createKey, revokeKey } from '../../src/keys/keys.js';
import { READ_SCOPES } from '../../src/registers/define.js';
import { setModule } from '../../src/workspaces/workspaces.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';

const BIN = new URL('../../bin/wsops', import.meta.url).pathname;
const ANN = 'console:ann@example.com';
const BOB = 'console:bob@example.com';

/**
 * Every action the trail records: each feature declares its own with their words (its
 * audit-words.ts), and the type `AuditAction` lets no other be recorded.
 */
const declaredActions = (): string[] => Object.keys(AUDIT_WORDS).filter((a) => a !== 'action.*');

describe('audit entries in words', () => {
  it('every action the code records has a kind the filter offers and a sentence of its own', () => {
    const actions = declaredActions();
    for (const expected of [
      'key.created',
      'key.revoked',
      'endpoint.created',
      'endpoint.disabled',
      'module.installed',
      'record.corrected',
      'record.deleted',
    ]) {
      assert.ok(actions.includes(expected), `${expected} is declared`);
    }
    for (const action of [...actions, 'action.asset.assign']) {
      assert.ok(Object.hasOwn(AUDIT_KINDS, auditKindOf(action)), `${action} is of a kind the filter offers`);
      const words = describeAudit({ action, target: 'id_1', key_id: null, detail: {} });
      assert.ok(!words.startsWith(action), `${action} reads as words, not as its code: "${words}"`);
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`audit trail [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let other: string;
    const db = () => h.services.database.db;
    const wsops = (...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], {
        env: { ...process.env, WSOPS_DATABASE_URL: h.databaseUrl, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent' },
        encoding: 'utf8',
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
    };
    const key = (workspaceId: string, createdBy: string, name = 'Payroll sync') =>
      createKey(h.services.database, {
        workspaceId,
        scopes: [...READ_SCOPES],
        environment: 'test',
        name,
        createdBy,
        now: h.clock(),
        maxKeys: h.services.config.maxKeys,
      });

    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace({ seed: true });
      other = await h.workspace({ seed: false });
      const k = await key(ws, ANN);
      await revokeKey(db(), ws, k.key_id, h.clock(), BOB);
      await key(ws, 'cli');
      await setModule(db(), ws, 'approvals', false, new Date(h.clock()).toISOString(), ANN);
      await recordAudit(db(), {
        workspaceId: ws,
        at: new Date(h.clock()).toISOString(),
        actor: 'operator',
        action: 'action.asset_return',
        target: 'ast_1',
      });
      await key(other, ANN, 'Other workspace key');
    });
    after(() => h.close());

    it('the kind filter returns only entries of that kind, newest first', async () => {
      const keys = await listAudit(db(), ws, { kind: 'key' });
      assert.deepEqual(
        keys.map((e) => e.action),
        ['key.created', 'key.revoked', 'key.created'],
      );
      assert.ok(keys[0] && keys[1] && keys[0].seq > keys[1].seq);
      assert.deepEqual(
        (await listAudit(db(), ws, { kind: 'module' })).map((e) => [e.action, e.target]),
        [['module.uninstalled', 'approvals']],
      );
    });

    it('the actor filter: "operator" covers the CLI and the internal API; an exact console actor matches that admin only', async () => {
      const operator = await listAudit(db(), ws, { actor: 'operator' });
      assert.ok(operator.length >= 3);
      assert.ok(operator.every((e) => e.actor === 'cli' || e.actor === 'operator'));
      assert.ok(operator.some((e) => e.actor === 'operator') && operator.some((e) => e.actor === 'cli'));
      assert.deepEqual(
        (await listAudit(db(), ws, { actor: BOB })).map((e) => e.action),
        ['key.revoked'],
      );
      assert.deepEqual((await listAudit(db(), ws, { actor: 'console' })).map((e) => e.actor).sort(), [ANN, ANN, BOB]);
      assert.deepEqual(
        (await listAudit(db(), ws, { actor: ANN, kind: 'module' })).map((e) => e.action),
        ['module.uninstalled'],
      );
    });

    it("keyset paging covers the trail exactly once, even while entries are added, and never shows another workspace's entries", async () => {
      const all = await listAudit(db(), ws, { limit: 500 });
      const seen: number[] = [];
      let before: number | undefined;
      for (let pages = 0; pages < 50; pages++) {
        const page = await auditPage(db(), ws, { limit: 2, before });
        seen.push(...page.entries.map((e) => e.seq));
        if (pages === 0) await key(ws, ANN, 'Added while paging');
        if (page.nextBefore === null) break;
        before = page.nextBefore;
      }
      assert.deepEqual(
        seen,
        all.map((e) => e.seq),
      );
      const otherSeqs = new Set((await listAudit(db(), other, { limit: 500 })).map((e) => e.seq));
      assert.ok(otherSeqs.size > 0);
      assert.ok(!seen.some((s) => otherSeqs.has(s)), 'no entry of another workspace');
      assert.ok(!all.some((e) => describeAudit(e).includes('Other workspace key')));
    });

    it('a wrong filter is refused with what is accepted', async () => {
      await assert.rejects(listAudit(db(), ws, { kind: 'payroll' }), /unknown kind "payroll"; kinds are: key, endpoint/);
      await assert.rejects(listAudit(db(), ws, { limit: 0 }), /limit must be a whole number from 1 to 500/);
      await assert.rejects(listAudit(db(), ws, { before: -1 }), /before must be a positive whole number/);
    });

    it('entries read in words with their ids: "Created API key <key_id> (<name>)"', async () => {
      const k = await key(ws, ANN, 'Badge reader');
      const [entry] = await listAudit(db(), ws, { limit: 1 });
      assert.ok(entry);
      assert.equal(describeAudit(entry), `Created API key ${k.key_id} (Badge reader)`);
    });

    it('wsops correct and wsops delete are recorded as the operator; wsops audit filters and pages them', async () => {
      // The second is a vendor no record names (a named one is not deleted: ADR 43).
      const [vendor, second] = await db()
        .selectFrom('records')
        .select('id')
        .where('workspace_id', '=', ws)
        .where('register', '=', 'vendors')
        .where('id', 'not in', db().selectFrom('record_refs').select('target_id').where('workspace_id', '=', ws))
        .orderBy('id')
        .limit(2)
        .execute();
      assert.ok(vendor && second);
      const corrected = wsops('correct', '--workspace', ws, 'vendors', vendor.id, 'name=Acme Supplies', '--json');
      assert.equal(corrected.status, 0, corrected.stderr);
      const deleted = wsops('delete', '--workspace', ws, 'vendors', second.id, '--json');
      assert.equal(deleted.status, 0, deleted.stderr);
      const page = wsops('audit', '--workspace', ws, '--kind', 'record', '--actor', 'operator', '--limit', '1', '--json');
      assert.equal(page.status, 0, page.stderr);
      const first = page.json();
      assert.deepEqual(
        first.entries.map((e: { action: string; target: string; actor: string }) => [e.action, e.target, e.actor]),
        [['record.deleted', second.id, 'cli']],
      );
      assert.equal(typeof first.next_before, 'number');
      const next = wsops('audit', '--workspace', ws, '--kind', 'record', '--before', String(first.next_before));
      assert.equal(next.status, 0, next.stderr);
      assert.match(next.stdout, new RegExp(`Operator \\(CLI\\) +Corrected vendors ${vendor.id}: name`));
      const refused = wsops('audit', '--workspace', ws, '--kind', 'payroll');
      assert.equal(refused.status, 2);
      assert.match(refused.stderr, /--kind must be one of key, endpoint/);
    });
  });
}
