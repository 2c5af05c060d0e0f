/**
 * The per-workspace limits, console admins' addresses, module installs and endpoint state,
 * raced across two real API processes on one database (docs/guarantees.md: each guarantee, what
 * in the database holds it, and the test here that races it). Many requests go at once, over
 * both processes, through the console forms a user posts and through CLI processes; each race is
 * run several rounds and a failure says in how many it broke. No process's memory can hold
 * these: only the database serialises the check and the write that follows it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createKey } from '../../src/keys/keys.js';
import { OPTIONAL_MODULES } from '../../src/registers/define.js';
import { MAX_SCIM_TOKENS } from '../../src/scim/tokens.js';
import { createServices } from '../../src/services.js';
import { ssoAdmin } from '../../src/sign-in/sso-admins.js';
import { createEndpoint, disableEndpoint, MAX_DELIVERING_ENDPOINTS } from '../../src/webhooks/endpoints/endpoints.js';
import type { ApiProcesses } from '../helpers/api-processes.js';
import { type SignedInAdmin, signedInAdmin } from '../helpers/console.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness, TEST_SECRET } from '../helpers/harness.js';
import { runWsops } from '../helpers/processes.js';
import { type HttpAnswer, postForm, Rounds, request, spread, startRacers } from '../helpers/races.js';

const ROUNDS = 5;
/** Rounds of races between CLI processes (each round starts several Node processes). */
const CLI_ROUNDS = 3;
const MAX_KEYS = 5;
const BASE = 'http://localhost:8080';
const HOST = new URL(BASE).host;
const HOOK = 'http://127.0.0.1:9/hook';
const ENDPOINT_FORM = { url: HOOK, scopes: 'vendors:read', events: 'vendor.renewal_approaching' };

const statuses = (answers: readonly HttpAnswer[]) => answers.map((a) => a.status).join(' ');

for (const dialect of DIALECTS) {
  describe(`limits and uniqueness across two API processes [${dialect}]`, () => {
    let h: Harness;
    let procs: ApiProcesses;
    let cliEnv: Record<string, string>;
    before(async () => {
      h = await createHarness(dialect, { WSOPS_BASE_URL: BASE, WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
      // The processes run on the real clock: sessions made here must not look stale to them.
      h.clock.set(Date.now());
      const env = { WSOPS_MAX_KEYS: String(MAX_KEYS), WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true', WSOPS_BASE_URL: BASE };
      procs = await startRacers(h.databaseUrl, env);
      cliEnv = { ...env, WSOPS_DATABASE_URL: h.databaseUrl, WSOPS_SECRET: TEST_SECRET, WSOPS_DEMO: 'false', WSOPS_LOG_LEVEL: 'error' };
    });
    after(async () => {
      await procs?.stop();
      await h?.close();
    });

    /** A console form posted by `admin` to process `url`. */
    const post = (admin: SignedInAdmin, url: string, path: string, form: Record<string, string | readonly string[]> = {}) =>
      postForm(`${url}${path}`, HOST, { _csrf: admin.csrf, ...form }, admin.cookie);

    /** Loads `path` once on each process, so the race is not spread by a first request's start-up. */
    async function warm(admin: SignedInAdmin, path: string) {
      for (const url of procs.publicUrls) {
        const res = await request(`${url}${path}`, { host: HOST, headers: { cookie: admin.cookie } });
        assert.equal(res.status, 200, `${path} on ${url}: ${res.body}\n${procs.output()}`);
      }
    }

    /** One CLI command as its own process: whether it succeeded, and what it printed. */
    async function cli(args: string[]): Promise<{ ok: boolean; out: string }> {
      try {
        return { ok: true, out: await runWsops(args, cliEnv) };
      } catch (err) {
        return { ok: false, out: (err as Error).message };
      }
    }

    const validKeys = async (ws: string) =>
      Number(
        (
          await h.services.database.db
            .selectFrom('api_keys')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('workspace_id', '=', ws)
            .where('revoked_at', 'is', null)
            .executeTakeFirstOrThrow()
        ).n,
      );

    async function workspaceWithKeys(keys: number) {
      const ws = await h.workspace({ seed: false });
      for (let i = 0; i < keys; i++) {
        await createKey(h.services.database, {
          workspaceId: ws,
          scopes: ['vendors:read'],
          environment: 'test',
          now: h.clock(),
          maxKeys: 100,
        });
      }
      return ws;
    }

    it('the plan key limit: with one slot left, eight console forms at once over both processes make exactly one key', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await workspaceWithKeys(MAX_KEYS - 1);
        const admin = await signedInAdmin(h, ws);
        await warm(admin, '/console/keys');
        const form = { name: 'raced', scopes: 'vendors:read', environment: 'test', days: '30', allowed_ips: '' };
        const answers = await spread(8, procs.publicUrls, (url) => post(admin, url, '/console/keys', form));
        const made = answers.filter((a) => a.status === 201).length;
        const valid = await validKeys(ws);
        rounds.record(r, made === 1 && valid === MAX_KEYS, `${made} forms made a key, ${valid} valid keys; statuses ${statuses(answers)}`);
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('key limit (console)'));
    });

    it('the plan key limit: four `wsops key create` processes at once with one slot left make exactly one key', async () => {
      const rounds = new Rounds(CLI_ROUNDS);
      for (let r = 0; r < CLI_ROUNDS; r++) {
        const ws = await workspaceWithKeys(MAX_KEYS - 1);
        const runs = await Promise.all(
          Array.from({ length: 4 }, () => cli(['key', 'create', '--workspace', ws, '--scopes', 'vendors:read', '--env', 'test', '--json'])),
        );
        const made = runs.filter((run) => run.ok).length;
        const valid = await validKeys(ws);
        const refusals = runs.filter((run) => !run.ok && /plan allows/.test(run.out)).length;
        rounds.record(r, made === 1 && refusals === 3 && valid === MAX_KEYS, `${made} made, ${refusals} refused, ${valid} valid keys`);
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('key limit (CLI)'));
    });

    const delivering = async (ws: string) =>
      (
        await h.services.database.db
          .selectFrom('webhook_endpoints')
          .select('id')
          .where('workspace_id', '=', ws)
          .where('status', '!=', 'disabled')
          .execute()
      ).length;

    const newEndpoint = (ws: string) => createEndpoint(h.services, ws, ENDPOINT_FORM);

    it('at most five delivering endpoints: with one slot left, eight registrations at once make exactly one', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await h.workspace({ seed: false });
        for (let i = 0; i < MAX_DELIVERING_ENDPOINTS - 1; i++) await newEndpoint(ws);
        const admin = await signedInAdmin(h, ws);
        await warm(admin, '/console/webhooks/new');
        const answers = await spread(8, procs.publicUrls, (url) => post(admin, url, '/console/webhooks/new', ENDPOINT_FORM));
        const made = answers.filter((a) => a.status === 200).length;
        const limited = answers.filter((a) => a.status === 409).length;
        const now = await delivering(ws);
        rounds.record(
          r,
          made === 1 && limited === 7 && now === MAX_DELIVERING_ENDPOINTS,
          `${made} registered, ${now} delivering; statuses ${statuses(answers)}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('endpoint limit (registrations)'));
    });

    it('at most five delivering endpoints: four disabled ones switched on and four registrations, all at once with one slot left, leave five', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await h.workspace({ seed: false });
        const disabled: string[] = [];
        for (let i = 0; i < 4; i++) {
          const e = await newEndpoint(ws);
          await disableEndpoint(h.services, ws, e.id);
          disabled.push(e.id);
        }
        for (let i = 0; i < MAX_DELIVERING_ENDPOINTS - 1; i++) await newEndpoint(ws);
        const admin = await signedInAdmin(h, ws);
        await warm(admin, '/console/webhooks/new');
        const answers = await spread(8, procs.publicUrls, (url, i) =>
          i < 4 ? post(admin, url, `/console/webhooks/${disabled[i]}/enable`) : post(admin, url, '/console/webhooks/new', ENDPOINT_FORM),
        );
        const enabled = answers.filter((a, i) => i < 4 && a.status === 303).length;
        const made = answers.filter((a, i) => i >= 4 && a.status === 200).length;
        const now = await delivering(ws);
        rounds.record(
          r,
          enabled + made === 1 && now === MAX_DELIVERING_ENDPOINTS,
          `${enabled} enabled, ${made} registered, ${now} delivering; statuses ${statuses(answers)}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('endpoint limit (enables and registrations)'));
    });

    it('switching one disabled endpoint on from six requests at once switches it on once: one audit event, the others told it is no longer disabled', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await h.workspace({ seed: false });
        const e = await newEndpoint(ws);
        await disableEndpoint(h.services, ws, e.id);
        const admin = await signedInAdmin(h, ws);
        await warm(admin, `/console/webhooks/${e.id}`);
        const answers = await spread(6, procs.publicUrls, (url) => post(admin, url, `/console/webhooks/${e.id}/enable`));
        const enabled = answers.filter((a) => a.status === 303).length;
        const refused = answers.filter((a) => a.status === 409 && /not disabled/.test(a.body)).length;
        const audits = await h.services.database.db
          .selectFrom('audit_events')
          .select('id')
          .where('target', '=', e.id)
          .where('action', '=', 'endpoint.enabled')
          .execute();
        rounds.record(
          r,
          enabled === 1 && refused === 5 && audits.length === 1,
          `${enabled} enabled, ${refused} refused, ${audits.length} endpoint.enabled events; statuses ${statuses(answers)}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('enable once'));
    });

    it('two secret rotations of one endpoint at once: both new secrets sign afterwards (the later one, and the earlier in its grace)', async () => {
      const rounds = new Rounds(ROUNDS * 2);
      const ws = await h.workspace({ seed: false });
      const e = await newEndpoint(ws);
      const admin = await signedInAdmin(h, ws);
      await warm(admin, `/console/webhooks/${e.id}`);
      for (let r = 0; r < ROUNDS * 2; r++) {
        const answers = await spread(2, procs.publicUrls, (url) =>
          post(admin, url, `/console/webhooks/${e.id}/rotate`, { grace_hours: '24' }),
        );
        const given = answers.map((a) => /whsec_[0-9A-Za-z]{32}/.exec(a.body)?.[0] ?? `(status ${a.status})`);
        const row = await h.services.database.db
          .selectFrom('webhook_endpoints')
          .selectAll()
          .where('id', '=', e.id)
          .executeTakeFirstOrThrow();
        const signing = [row.secret_ciphertext, row.previous_secret_ciphertext].map((s) => (s ? h.services.secretBox.open(s) : null));
        rounds.record(
          r,
          [...given].sort().join() === [...signing].sort().join(),
          `rotations gave ${given.join(', ')}; signing now ${signing.join(', ')}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('secret rotation'));
    });

    const activeAdmins = async (ws: string, email: string) =>
      (
        await h.services.database.db
          .selectFrom('console_admins')
          .select('id')
          .where('workspace_id', '=', ws)
          .where('email', '=', email)
          .where('removed_at', 'is', null)
          .execute()
      ).length;

    it('one admin per address and workspace: eight console invitations of one new address at once add it once', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await h.workspace({ seed: false });
        const admin = await signedInAdmin(h, ws);
        await warm(admin, '/console/admins');
        const email = `raced-${r}@example.com`;
        const answers = await spread(8, procs.publicUrls, (url) => post(admin, url, '/console/admins', { email }));
        const added = answers.filter((a) => a.status === 201 && /added as an admin/.test(a.body)).length;
        const rows = await activeAdmins(ws, email);
        rounds.record(r, added === 1 && rows === 1, `${added} said added, ${rows} active admins; statuses ${statuses(answers)}`);
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('admin invitations'));
    });

    it('one admin per address and workspace: four `wsops admin create` processes at once add it once', async () => {
      const rounds = new Rounds(CLI_ROUNDS);
      for (let r = 0; r < CLI_ROUNDS; r++) {
        const ws = await h.workspace({ seed: false });
        const email = `cli-raced-${r}@example.com`;
        const runs = await Promise.all(
          Array.from({ length: 4 }, () => cli(['admin', 'create', '--workspace', ws, '--email', email, '--json'])),
        );
        const added = runs.filter((run) => run.ok && JSON.parse(run.out).created === true).length;
        const rows = await activeAdmins(ws, email);
        rounds.record(
          r,
          added === 1 && rows === 1 && runs.every((run) => run.ok),
          `${added} added, ${rows} active admins: ${runs.map((x) => x.out).join(' | ')}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('admin create (CLI)'));
    });

    it('one admin per address and workspace: single sign-on creating one address just in time from two services at once creates it once', async () => {
      const config = loadConfig({ WSOPS_DATABASE_URL: h.databaseUrl, WSOPS_SECRET: TEST_SECRET });
      const others = [await createServices(config), await createServices(config)];
      try {
        const rounds = new Rounds(ROUNDS);
        for (let r = 0; r < ROUNDS; r++) {
          const ws = await h.workspace({ seed: false });
          const email = `sso-raced-${r}@example.com`;
          const found = await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              ssoAdmin((others[i % 2] ?? h.services).database, { workspaceId: ws, email, create: true, now: Date.now() }),
            ),
          );
          const created = found.filter((f) => f?.created).length;
          const ids = new Set(found.map((f) => f?.id));
          const rows = await activeAdmins(ws, email);
          rounds.record(r, created === 1 && ids.size === 1 && rows === 1, `${created} created, ${ids.size} ids, ${rows} active admins`);
        }
        assert.equal(rounds.broken.length, 0, rounds.summary('SSO admins just in time'));
      } finally {
        await Promise.all(others.map((s) => s.close()));
      }
    });

    it('at most five unrevoked SCIM tokens: with one slot left, eight console forms at once make exactly one', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await h.workspace();
        const location = await h.services.database.db
          .selectFrom('records')
          .select('id')
          .where('workspace_id', '=', ws)
          .where('register', '=', 'locations')
          .executeTakeFirstOrThrow();
        const admin = await signedInAdmin(h, ws);
        const form = { name: 'Identity provider', location: location.id };
        for (let i = 0; i < MAX_SCIM_TOKENS - 1; i++) {
          const made = await post(admin, procs.publicUrls[0] as string, '/console/scim', form);
          assert.equal(made.status, 201, made.body);
        }
        await warm(admin, '/console/scim');
        const answers = await spread(8, procs.publicUrls, (url) => post(admin, url, '/console/scim', form));
        const made = answers.filter((a) => a.status === 201).length;
        const unrevoked = (
          await h.services.database.db
            .selectFrom('scim_tokens')
            .select('token_id')
            .where('workspace_id', '=', ws)
            .where('revoked_at', 'is', null)
            .execute()
        ).length;
        rounds.record(
          r,
          made === 1 && unrevoked === MAX_SCIM_TOKENS,
          `${made} made, ${unrevoked} unrevoked; statuses ${statuses(answers)}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('SCIM token limit'));
    });

    it('module installs at once: every optional module installed by its own console form at the same time is installed afterwards (no install lost)', async () => {
      const rounds = new Rounds(ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const ws = await h.workspace({ modules: '', seed: false });
        const admin = await signedInAdmin(h, ws);
        await warm(admin, '/console/modules');
        const answers = await spread(OPTIONAL_MODULES.length, procs.publicUrls, (url, i) =>
          post(admin, url, `/console/modules/${OPTIONAL_MODULES[i]}/install`),
        );
        const row = await h.services.database.db.selectFrom('workspaces').select('modules').where('id', '=', ws).executeTakeFirstOrThrow();
        const installed = row.modules.split(' ').filter(Boolean);
        const missing = OPTIONAL_MODULES.filter((m) => !installed.includes(m));
        rounds.record(
          r,
          missing.length === 0 && answers.every((a) => a.status === 303),
          `missing afterwards: ${missing.join(', ') || 'none'}; statuses ${statuses(answers)}`,
        );
      }
      assert.equal(rounds.broken.length, 0, rounds.summary('module installs'));
    });
  });
}
