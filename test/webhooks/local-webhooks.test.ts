/**
 * Testing webhooks on one machine, as a newcomer does it (issue 27, points 1 and 2), with real
 * processes: `wsops serve`, `wsops listen`, the CLI and a receiver on 127.0.0.1.
 * - A refused URL names its rule and the setting that allows it (WSOPS_ALLOW_PRIVATE_WEBHOOKS).
 * - The CLI warns when the server that delivers would refuse what it just registered; such a
 *   delivery is url_refused, logged by the server, and `wsops deliveries` names the rule.
 * - `wsops listen` checks signatures and activates an endpoint at once.
 * - `wsops endpoint verify` sends the verification again now, for a receiver that answered the
 *   first one before it had the secret, and the resend is audited.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { verifySignature } from '@wsops/client';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../helpers/databases.js';
import { TEST_SECRET } from '../helpers/harness.js';
import { BIN, freePort, type Running, startWsops, until, waitFor } from '../helpers/processes.js';
import { Receiver } from '../helpers/receiver.js';

const DEV = { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' };

for (const dialect of DIALECTS) {
  describe(`testing webhooks locally [${dialect}]`, () => {
    let db: TestDatabase;
    let rx: Receiver;
    const run = (env: Record<string, string>, ...args: string[]) => {
      const r = spawnSync(process.execPath, [BIN, ...args], {
        env: { ...process.env, WSOPS_DATABASE_URL: db.url, WSOPS_SECRET: TEST_SECRET, WSOPS_LOG_LEVEL: 'silent', ...env },
        encoding: 'utf8',
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
    };
    const newWorkspace = () => run({}, 'workspace', 'create', '--name', 'Local hooks', '--json').json().id as string;
    const create = (env: Record<string, string>, ws: string, url: string, ...extra: string[]) =>
      run(env, 'endpoint', 'create', '--workspace', ws, '--url', url, '--scopes', 'assets:read', '--events', 'asset.assigned', ...extra);
    const serve = async (env: Record<string, string>): Promise<Running> => {
      const port = await freePort();
      const server = startWsops(['serve', '--port', String(port)], {
        WSOPS_DATABASE_URL: db.url,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_DEMO: 'false',
        ...env,
      });
      await waitFor(`http://127.0.0.1:${port}/healthz`, server);
      return server;
    };
    const endpointStatus = (ws: string, id: string) =>
      (run({}, 'endpoint', 'list', '--workspace', ws, '--json').json() as { id: string; status: string }[]).find((e) => e.id === id)
        ?.status;

    before(async () => {
      db = await createTestDatabase(dialect);
      rx = await new Receiver().start();
    });
    after(async () => {
      await rx.stop();
      await db.drop();
    });

    it('endpoint create refuses an http URL on 127.0.0.1 naming the rule and WSOPS_ALLOW_PRIVATE_WEBHOOKS, in one line', () => {
      const ws = newWorkspace();
      const r = create({}, ws, 'http://127.0.0.1:9911/hooks');
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /webhook URL must use https \(got http:\) \[rule: scheme\]/);
      assert.match(r.stderr, /set WSOPS_ALLOW_PRIVATE_WEBHOOKS=true for the server that delivers/);
      assert.match(r.stderr, /refused when WSOPS_ENV=live/);
      assert.equal(r.stderr.trim().split('\n').length, 1);
      const port = create({}, ws, 'https://hooks.example.com:8443/x');
      assert.match(port.stderr, /\[rule: port\].*WSOPS_ALLOW_PRIVATE_WEBHOOKS/);
      const userinfo = create(DEV, ws, 'http://user:pw@127.0.0.1:9911/x');
      assert.match(userinfo.stderr, /\[rule: userinfo\]/);
      assert.doesNotMatch(userinfo.stderr, /WSOPS_ALLOW_PRIVATE_WEBHOOKS/, 'the setting is named only where it would help');
    });

    it('with the setting on the CLI and no server seen yet, create registers and warns that the server needs it too', () => {
      const ws = newWorkspace();
      const r = create(DEV, ws, rx.url('/no-server-yet'), '--json');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /warning: this URL is accepted only because WSOPS_ALLOW_PRIVATE_WEBHOOKS=true here/);
      assert.match(
        r.stderr,
        /Start the server with WSOPS_ALLOW_PRIVATE_WEBHOOKS=true too, or every delivery to this URL is refused \(url_refused\)/,
      );
      assert.match(r.json().secret, /^whsec_/, 'the JSON output on stdout is unchanged');
      const readable = create(DEV, ws, rx.url('/no-server-yet-2'));
      assert.equal(readable.status, 0, readable.stderr);
      assert.match(
        readable.stdout,
        /send the verification again now: WSOPS_ALLOW_PRIVATE_WEBHOOKS=true wsops endpoint verify --workspace \S+ we_\S+$/m,
        'the hint carries the setting the command needed',
      );
    });

    it('endpoint create --help says how a receiver on this machine is allowed in development', () => {
      const r = run({}, 'endpoint', 'create', '--help');
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout.replace(/\s+/g, ' '), /WSOPS_ALLOW_PRIVATE_WEBHOOKS=true for the server and this command/);
    });

    it('a server without the setting: the CLI warns at create, the delivery is url_refused, the server logs the rule, deliveries names rule and setting', async () => {
      const ws = newWorkspace();
      const server = await serve({});
      try {
        const r = create(DEV, ws, rx.url('/refused'), '--json');
        assert.equal(r.status, 0, r.stderr);
        const id = r.json().id as string;
        assert.match(r.stderr, /warning: the server that delivers \(started [0-9T:.-]+Z\) runs without WSOPS_ALLOW_PRIVATE_WEBHOOKS/);
        assert.match(
          r.stderr,
          /every delivery to this URL will be refused \(url_refused\): webhook URL must use https \(got http:\) \[rule: scheme\]/,
        );
        // verify checks the URL again, so the command it suggests carries the setting.
        assert.ok(r.stderr.includes(`WSOPS_ALLOW_PRIVATE_WEBHOOKS=true wsops endpoint verify --workspace ${ws} ${id}`), r.stderr);

        const line = await until(
          () =>
            server
              .output()
              .split('\n')
              .find((l) => l.includes('delivery refused (url_refused)') && l.includes(id)),
          20_000,
          'the url_refused log line',
        );
        const logged = JSON.parse(line);
        assert.equal(logged.level, 40, 'a warning');
        assert.equal(logged.endpoint_id, id);
        assert.equal(logged.event_type, 'endpoint.verification');
        assert.equal(logged.rule, 'scheme');
        assert.match(logged.reason, /\[rule: scheme\]; to deliver to a receiver on this machine .* WSOPS_ALLOW_PRIVATE_WEBHOOKS=true/);
        assert.equal(rx.at('/refused').length, 0, 'nothing was sent');

        const listed = await until(
          () => {
            const d = run({}, 'deliveries', '--workspace', ws);
            return d.stdout.includes('url_refused') ? d : undefined;
          },
          10_000,
          'the url_refused attempt in wsops deliveries',
        );
        assert.match(listed.stdout, /^url_refused: nothing was sent: the server that delivers refused the endpoint URL/m);
        assert.match(listed.stdout, /start that server with WSOPS_ALLOW_PRIVATE_WEBHOOKS=true \(test and development only\)/);
        assert.match(listed.stdout, new RegExp(`^${id} last failure: webhook URL must use https \\(got http:\\) \\[rule: scheme\\]`, 'm'));
        const json = run({}, 'deliveries', '--workspace', ws, '--json').json();
        assert.equal(json[0].error_class, 'url_refused', 'the JSON keeps the contract fields');
      } finally {
        await server.stop();
      }
    });

    it('wsops listen, started before the endpoint exists, checks the signature of the verification and the endpoint is active at once', async () => {
      const ws = newWorkspace();
      const server = await serve(DEV);
      const port = await freePort();
      const listener = startWsops(['listen', '--workspace', ws, '--port', String(port)], {
        WSOPS_DATABASE_URL: db.url,
        WSOPS_SECRET: TEST_SECRET,
        WSOPS_LOG_LEVEL: 'silent',
      });
      try {
        await until(() => listener.output().includes('listening on'), 20_000, 'wsops listen to start');
        const r = create(DEV, ws, `http://127.0.0.1:${port}/hooks`, '--json');
        assert.equal(r.status, 0, r.stderr);
        assert.doesNotMatch(r.stderr, /warning/, 'the server delivers to private addresses: no warning');
        const id = r.json().id as string;
        await until(() => endpointStatus(ws, id) === 'active', 20_000, 'the endpoint to be active');
        // spawnSync above blocks this process: the listener's output may still be in the pipe.
        await until(() => listener.output().includes('signature ok'), 5_000, 'the listener to print the verification');
        assert.match(listener.output(), /endpoint\.verification evt_\w+ \(delivery dlv_\w+ on \/hooks\) signature ok/);
        assert.ok(listener.output().includes(`"endpoint_id":"${id}"`), listener.output());

        const forged = await fetch(`http://127.0.0.1:${port}/hooks`, {
          method: 'POST',
          headers: { 'x-service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`, 'x-service-delivery': 'dlv_forged' },
          body: '{"id":"evt_x","type":"asset.assigned","data":{}}',
        });
        assert.equal(forged.status, 400, 'a receiver refuses what it cannot verify');
        await until(() => listener.output().includes('refused dlv_forged'), 5_000, 'the refusal printed');
        assert.match(listener.output(), /refused dlv_forged on \/hooks: no v1 signature matches the signing secret \(answered 400\)/);
      } finally {
        await listener.stop();
        await server.stop();
      }
    });

    it('wsops endpoint verify sends the verification again now: a receiver that answered the first before it had the secret is active without waiting for the retry, and the resend is audited', async () => {
      const ws = newWorkspace();
      const server = await serve(DEV);
      let secret: string | undefined;
      // A receiver that checks signatures, as the docs say it should: without the secret it answers 400.
      rx.on('/late-secret', (req, res, body) => {
        try {
          if (!secret) throw new Error('no secret yet');
          verifySignature(body, req.headers['x-service-signature'] as string, secret);
          res.writeHead(200).end('ok');
        } catch {
          res.writeHead(400).end('cannot verify');
        }
      });
      try {
        const r = create(DEV, ws, rx.url('/late-secret'), '--json');
        assert.equal(r.status, 0, r.stderr);
        const { id, secret: printed } = r.json() as { id: string; secret: string };
        await until(
          () => (run({}, 'deliveries', '--workspace', ws, '--json').json() as { status_code: number }[]).some((d) => d.status_code === 400),
          20_000,
          'the first verification to be answered 400',
        );
        assert.equal(endpointStatus(ws, id), 'unverified');
        secret = printed;
        const verify = run(DEV, 'endpoint', 'verify', '--workspace', ws, id);
        assert.equal(verify.status, 0, verify.stderr);
        assert.match(verify.stdout, /its signed endpoint\.verification is due now/);
        // Within 20 s: well before the first retry (1 minute) would have come.
        await until(() => endpointStatus(ws, id) === 'active', 20_000, 'the endpoint to be active');
        const audit = run({}, 'audit', '--workspace', ws, '--json').json() as {
          entries: { action: string; target: string; actor: string }[];
        };
        const entry = audit.entries.find((e) => e.action === 'endpoint.verification_sent');
        assert.ok(entry, JSON.stringify(audit));
        assert.equal(entry.target, id);
        assert.equal(entry.actor, 'cli');
        const again = run(DEV, 'endpoint', 'verify', '--workspace', ws, id);
        assert.equal(again.status, 2, 'an active endpoint has nothing to verify');
        assert.match(again.stderr, /is active; only an endpoint awaiting verification can be re-verified/);
      } finally {
        await server.stop();
      }
    });
  });
}
