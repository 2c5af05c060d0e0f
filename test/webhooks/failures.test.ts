/**
 * Receivers that misbehave: a bad certificate, no answer, an endless body, a huge body. Each is
 * an outcome (a failed or a successful attempt), never a stuck worker or a crash.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import { createEndpoint } from '../../src/webhooks/endpoints/endpoints.js';
import { createHarness, type Harness } from '../helpers/harness.js';

function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'wsops-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

describe('misbehaving receivers [sqlite]', () => {
  let h: Harness;
  let ws: string;
  let dispatcher: Dispatcher;
  const servers: Server[] = [];
  before(async () => {
    h = await createHarness('sqlite', { WSOPS_ALLOW_PRIVATE_WEBHOOKS: 'true' });
    ws = await h.workspace({ seed: false });
    dispatcher = new Dispatcher(h.services, { random: () => 0 });
  });
  after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    await dispatcher.stop();
    await h.close();
  });

  const outcomeOf = async (endpointId: string) =>
    h.services.database.db.selectFrom('delivery_attempts').selectAll().where('endpoint_id', '=', endpointId).executeTakeFirstOrThrow();

  it('a TLS error (self-signed certificate), no answer within 10 s, and an endless body are failures; a huge body is kept to 4 KB', async () => {
    const tls = createHttpsServer(selfSignedCertificate(), (_req, res) => res.end('ok'));
    const silent = createServer(() => {
      /* never answers */
    });
    const dribble = createServer((_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('.'), 200);
      res.on('close', () => clearInterval(timer));
    });
    const huge = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'y'.repeat(64 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < 10 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    servers.push(tls, silent, dribble, huge);
    const tlsPort = await listen(tls);
    const urls = {
      tls: `https://127.0.0.1:${tlsPort}/hook`,
      silent: `http://127.0.0.1:${await listen(silent)}/hook`,
      dribble: `http://127.0.0.1:${await listen(dribble)}/hook`,
      huge: `http://127.0.0.1:${await listen(huge)}/hook`,
    };
    const ids: Record<string, string> = {};
    for (const [name, url] of Object.entries(urls)) {
      ids[name] = (await createEndpoint(h.services, ws, { url, scopes: 'assets:read', events: 'asset.assigned' })).id;
    }
    // The batch ends (a receiver that never stops dribbling would hold it, and the file, forever).
    await dispatcher.runOnce();
    const tlsAttempt = await outcomeOf(ids.tls!);
    assert.equal(tlsAttempt.outcome, 'failed');
    assert.equal(tlsAttempt.error_class, 'tls');
    for (const name of ['silent', 'dribble']) {
      const a = await outcomeOf(ids[name]!);
      assert.equal(a.outcome, 'failed', name);
      assert.equal(a.error_class, 'timeout', name);
      assert.ok(a.latency_ms >= 9_900, `${name} waited the full 10 s (${a.latency_ms} ms)`);
    }
    const hugeAttempt = await outcomeOf(ids.huge!);
    assert.equal(hugeAttempt.outcome, 'succeeded');
    assert.equal(hugeAttempt.response_body?.length, 4096);
    const endpoints = await h.services.database.db.selectFrom('webhook_endpoints').select(['id', 'status']).execute();
    assert.equal(endpoints.find((e) => e.id === ids.huge)?.status, 'active');
    assert.equal(endpoints.find((e) => e.id === ids.tls)?.status, 'unverified');
  });
});
