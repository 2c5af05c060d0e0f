/**
 * Webhook URL rules (seed sections 2, 8; CONTRACT "Webhooks"): https, port 443, no userinfo, and
 * every resolved address public. No test here touches the network: host names go to a fake
 * resolver, and IP literals are never resolved.
 */
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors.js';
import {
  ALLOW_PRIVATE_HINT,
  checkWebhookUrl,
  isPublicAddress,
  nonPublicReason,
  pinnedLookup,
  type Resolver,
  type UrlRule,
} from '../../src/webhooks/destinations/url-safety.js';

const DNS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14'],
  'dual.example.com': ['2606:2800:21f:cb07:6820:80da:af6b:8b2c', '93.184.215.14'],
  'api.example.com': ['10.0.0.5'],
  'rebind.example': ['93.184.215.14', '10.0.0.1'],
  'v6private.example': ['2606:2800:21f:cb07:6820:80da:af6b:8b2c', 'fd12:3456::1'],
  'mapped.example': ['::ffff:192.168.1.1'],
  '127.0.0.1.nip.io': ['127.0.0.1'],
  'metadata.example': ['169.254.169.254'],
  'empty.example': [],
  'garbage.example': ['not-an-ip'],
  localhost: ['127.0.0.1', '::1'],
  receiver: ['172.18.0.7'],
};

/** Answers from the table above; anything else fails like getaddrinfo does. Records every call. */
function fakeResolver(calls: string[] = []): Resolver {
  return async (hostname) => {
    calls.push(hostname);
    const answer = DNS[hostname.replace(/\.$/, '')]; // a trailing dot marks the name fully qualified
    if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answer;
  };
}

type Row = readonly [url: string, expected: 'ok' | UrlRule, note?: string];

const STRICT = { allowPrivate: false };

const ROWS: readonly Row[] = [
  // Accepted: public addresses and names.
  ['https://93.184.215.14/', 'ok'],
  ['https://93.184.215.14:443/hook', 'ok', 'explicit :443'],
  ['https://hooks.example.com/wsops?x=1', 'ok'],
  ['https://hooks.example.com:443/wsops', 'ok', 'explicit :443'],
  ['https://HOOKS.Example.COM/wsops', 'ok', 'case-insensitive host'],
  ['https://hooks.example.com./wsops', 'ok', 'trailing dot'],
  ['https://dual.example.com/', 'ok', 'public v6 and v4'],
  ['https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/', 'ok'],
  ['https://[::ffff:93.184.215.14]/', 'ok', 'IPv4-mapped public'],
  ['https://[64:ff9b::93.184.215.14]/', 'ok', 'NAT64 of a public IPv4'],
  ['https://[2002:5db8:d70e::1]/', 'ok', '6to4 of 93.184.215.14'],
  ['https://1.1.1.1/', 'ok'],
  ['https://8.8.8.8/', 'ok'],
  ['https://100.63.255.255/', 'ok', 'just below CGNAT'],
  ['https://100.128.0.0/', 'ok', 'just above CGNAT'],
  ['https://172.15.255.255/', 'ok', 'just below 172.16/12'],
  ['https://172.32.0.0/', 'ok', 'just above 172.16/12'],
  ['https://198.20.0.1/', 'ok', 'just above 198.18/15'],
  ['https://223.255.255.255/', 'ok', 'just below multicast'],

  // Scheme, port, userinfo, length, syntax.
  ['http://93.184.215.14/', 'scheme'],
  ['http://hooks.example.com/', 'scheme'],
  ['ftp://hooks.example.com/', 'scheme'],
  ['wss://hooks.example.com/', 'scheme'],
  ['file:///etc/passwd', 'scheme'],
  ['https://hooks.example.com:8443/', 'port'],
  ['https://hooks.example.com:80/', 'port'],
  ['https://93.184.215.14:444/', 'port'],
  ['https://user:pass@hooks.example.com/', 'userinfo'],
  ['https://user@hooks.example.com/', 'userinfo'],
  ['https://:pass@hooks.example.com/', 'userinfo'],
  ['https://hooks.example.com@10.0.0.1/', 'userinfo', 'host confusion'],
  [`https://hooks.example.com/${'a'.repeat(2048)}`, 'too_long'],
  ['not a url', 'malformed'],
  ['', 'malformed'],
  ['/relative/path', 'malformed'],
  ['https://', 'malformed'],
  ['https://1.2.3.4.5/', 'malformed', 'numeric last label that is not IPv4'],
  ['https://[fe80::1%25eth0]/', 'malformed', 'zone id'],
  ['https://[::1/', 'malformed'],

  // Host names refused before any DNS lookup.
  ['https://localhost/', 'host'],
  ['https://LOCALHOST./', 'host'],
  ['https://%6c%6fcalhost/', 'host', 'percent-encoded'],
  ['https://ｌｏｃａｌｈｏｓｔ/', 'host', 'full-width letters'],
  ['https://api.localhost/', 'host'],
  ['https://printer.local/', 'host'],
  ['https://metadata.google.internal/', 'host'],
  ['https://router.home.arpa/', 'host'],
  ['https://receiver/', 'host', 'single label'],
  ['https://intranet./', 'host', 'single label with trailing dot'],

  // Resolution.
  ['https://nx.example.com/', 'unresolvable'],
  ['https://empty.example/', 'unresolvable'],
  ['https://garbage.example/', 'unresolvable'],

  // Names resolving to non-public addresses: every address must be public.
  ['https://api.example.com/', 'private_address'],
  ['https://rebind.example/', 'private_address', 'one public, one private'],
  ['https://v6private.example/', 'private_address'],
  ['https://mapped.example/', 'private_address'],
  ['https://127.0.0.1.nip.io/', 'private_address'],
  ['https://metadata.example/', 'private_address'],

  // IPv4 loopback in every spelling.
  ['https://127.0.0.1/', 'private_address'],
  ['https://127.1/', 'private_address', 'short form'],
  ['https://2130706433/', 'private_address', 'decimal'],
  ['https://0x7f000001/', 'private_address', 'hex'],
  ['https://0x7f.1/', 'private_address', 'hex short'],
  ['https://0177.0.0.1/', 'private_address', 'octal'],
  ['https://0x7F.0.0.0x1/', 'private_address', 'mixed'],
  ['https://127.255.255.254/', 'private_address'],
  ['https://127.0.0.1:443/', 'private_address'],
  // Other refused IPv4 ranges.
  ['https://0.0.0.0/', 'private_address'],
  ['https://0/', 'private_address', 'decimal 0'],
  ['https://0.255.255.255/', 'private_address'],
  ['https://10.0.0.1/', 'private_address'],
  ['https://012.0.0.1/', 'private_address', 'octal 10'],
  ['https://167772161/', 'private_address', 'decimal 10.0.0.1'],
  ['https://10.255.255.255/', 'private_address'],
  ['https://172.16.0.1/', 'private_address'],
  ['https://172.31.255.255/', 'private_address'],
  ['https://192.168.0.1/', 'private_address'],
  ['https://0xc0a80001/', 'private_address', 'hex 192.168.0.1'],
  ['https://192.168.1/', 'private_address', 'short 192.168.0.1'],
  ['https://169.254.169.254/', 'private_address', 'cloud metadata'],
  ['https://100.64.0.1/', 'private_address', 'CGNAT'],
  ['https://100.127.255.255/', 'private_address', 'CGNAT'],
  ['https://224.0.0.1/', 'private_address', 'multicast'],
  ['https://239.255.255.250/', 'private_address', 'multicast'],
  ['https://240.0.0.1/', 'private_address', 'reserved'],
  ['https://255.255.255.255/', 'private_address', 'broadcast'],
  ['https://4294967295/', 'private_address', 'decimal broadcast'],
  ['https://192.0.0.8/', 'private_address', 'IETF protocol assignments'],
  ['https://192.0.2.10/', 'private_address', 'TEST-NET-1'],
  ['https://198.51.100.7/', 'private_address', 'TEST-NET-2'],
  ['https://203.0.113.9/', 'private_address', 'TEST-NET-3'],
  ['https://198.18.0.1/', 'private_address', 'benchmarking'],
  ['https://198.19.255.255/', 'private_address', 'benchmarking'],
  ['https://192.88.99.1/', 'private_address', '6to4 relay anycast'],

  // IPv6.
  ['https://[::1]/', 'private_address', 'loopback'],
  ['https://[0:0:0:0:0:0:0:1]/', 'private_address', 'loopback long form'],
  ['https://[::]/', 'private_address', 'unspecified'],
  ['https://[::ffff:127.0.0.1]/', 'private_address', 'IPv4-mapped loopback'],
  ['https://[::ffff:7f00:1]/', 'private_address', 'IPv4-mapped loopback, hex'],
  ['https://[::ffff:10.0.0.1]/', 'private_address', 'IPv4-mapped private'],
  ['https://[::ffff:a9fe:a9fe]/', 'private_address', 'IPv4-mapped metadata'],
  ['https://[0:0:0:0:0:ffff:192.168.0.1]/', 'private_address', 'IPv4-mapped private, long form'],
  ['https://[::127.0.0.1]/', 'private_address', 'IPv4-compatible (deprecated)'],
  ['https://[::93.184.215.14]/', 'private_address', 'IPv4-compatible is refused even for a public IPv4'],
  ['https://[::ffff:0:93.184.215.14]/', 'private_address', 'IPv4-translated'],
  ['https://[64:ff9b::127.0.0.1]/', 'private_address', 'NAT64 loopback'],
  ['https://[64:ff9b::a00:1]/', 'private_address', 'NAT64 private'],
  ['https://[64:ff9b:1::5db8:d70e]/', 'private_address', 'NAT64 local-use'],
  ['https://[2002:7f00:1::1]/', 'private_address', '6to4 of loopback'],
  ['https://[2002:c0a8:101::1]/', 'private_address', '6to4 of 192.168.1.1'],
  ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'private_address', 'Teredo'],
  ['https://[2001:db8::1]/', 'private_address', 'documentation'],
  ['https://[3fff::1]/', 'private_address', 'documentation (RFC 9637)'],
  ['https://[100::1]/', 'private_address', 'discard-only'],
  ['https://[2001:10::1]/', 'private_address', 'ORCHID'],
  ['https://[2001:20::1]/', 'private_address', 'ORCHIDv2'],
  ['https://[2001:1::1]/', 'private_address', 'IETF protocol assignments'],
  ['https://[fc00::1]/', 'private_address', 'unique-local'],
  ['https://[fd00:ec2::254]/', 'private_address', 'unique-local (cloud metadata)'],
  ['https://[fe80::1]/', 'private_address', 'link-local'],
  ['https://[febf:ffff::1]/', 'private_address', 'link-local upper end'],
  ['https://[fec0::1]/', 'private_address', 'site-local'],
  ['https://[ff02::1]/', 'private_address', 'multicast'],
  ['https://[5f00::1]/', 'private_address', 'SRv6 SID'],
  ['https://[4000::1]/', 'private_address', 'outside 2000::/3'],
  ['https://[1::1]/', 'private_address', 'outside 2000::/3'],
  ['https://[::ffff:93.184.215.14]:8443/', 'port'],
];

describe('checkWebhookUrl: the URL rules, table', () => {
  for (const [url, expected, note] of ROWS) {
    const label = `${url.length > 80 ? `${url.slice(0, 60)}…` : url}${note ? ` (${note})` : ''} → ${expected}`;
    it(label, async () => {
      const calls: string[] = [];
      if (expected === 'ok') {
        const checked = await checkWebhookUrl(url, STRICT, fakeResolver(calls));
        assert.ok(checked.url instanceof URL);
        assert.ok(checked.addresses.length > 0);
        for (const a of checked.addresses) assert.ok(isPublicAddress(a), a);
        return;
      }
      await assert.rejects(checkWebhookUrl(url, STRICT, fakeResolver(calls)), (err: unknown) => {
        assert.ok(err instanceof AppError, String(err));
        assert.equal(err.code, 'invalid_parameter');
        assert.equal(err.status, 400);
        assert.deepEqual(err.extra, { param: 'url', rule: expected });
        assert.match(err.message, /^webhook URL /);
        return true;
      });
      // Refusals by syntax or host name happen before any lookup; IP literals are never looked up.
      if (expected !== 'unresolvable' && expected !== 'private_address') assert.deepEqual(calls, []);
      if (url.includes('[') || /^https:\/\/[0-9x.]+[:/]/i.test(url)) assert.deepEqual(calls, []);
    });
  }
});

describe('checkWebhookUrl: details', () => {
  it('hands back the checked URL and addresses in resolver order', async () => {
    const checked = await checkWebhookUrl('https://dual.example.com:443/wsops', STRICT, fakeResolver());
    assert.equal(checked.url.href, 'https://dual.example.com/wsops');
    assert.deepEqual(checked.addresses, ['2606:2800:21f:cb07:6820:80da:af6b:8b2c', '93.184.215.14']);
  });

  it('judges IP literals as the address they denote, without DNS', async () => {
    const calls: string[] = [];
    const checked = await checkWebhookUrl('https://[::ffff:93.184.215.14]/', STRICT, fakeResolver(calls));
    assert.deepEqual(checked.addresses, ['::ffff:5db8:d70e']);
    assert.deepEqual(calls, []);
    // The default resolver is never reached for a literal either.
    const literal = await checkWebhookUrl('https://93.184.215.14/', STRICT);
    assert.deepEqual(literal.addresses, ['93.184.215.14']);
  });

  it('says which rule refused the URL and how to fix it', async () => {
    const message = async (url: string) => {
      try {
        await checkWebhookUrl(url, STRICT, fakeResolver());
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error(`accepted ${url}`);
    };
    assert.equal(
      await message('http://hooks.example.com/'),
      `webhook URL must use https (got http:) [rule: scheme]; ${ALLOW_PRIVATE_HINT}`,
    );
    assert.match(await message('https://hooks.example.com:8443/'), /^webhook URL must use port 443 \(got 8443\)/);
    assert.equal(
      await message('https://api.example.com/'),
      `webhook URL host api.example.com resolves to 10.0.0.5, a private address; endpoints must be reachable from the public internet [rule: private_address]; ${ALLOW_PRIVATE_HINT}`,
    );
    assert.match(await message('https://rebind.example/'), /resolves to 10\.0\.0\.1, a private address/);
    assert.match(await message('https://2130706433/'), /^webhook URL host 127\.0\.0\.1 is a loopback address;/);
    assert.match(await message('https://[::ffff:127.0.0.1]/'), /IPv4-mapped address embedding 127\.0\.0\.1 \(a loopback address\)/);
    assert.match(await message('https://[64:ff9b::a00:1]/'), /NAT64 address embedding 10\.0\.0\.1 \(a private address\)/);
    assert.match(await message('https://user:pass@hooks.example.com/'), /user name or password/);
    assert.match(await message('https://nx.example.com/'), /does not resolve \(ENOTFOUND\)/);
    assert.match(await message('https://localhost/'), /local name/);
    assert.match(await message(`https://hooks.example.com/${'a'.repeat(3000)}`), /at most 2048 characters/);
    // The setting is named where it would let the URL through, and only there.
    assert.match(await message('https://localhost/'), /\[rule: host\]; .*WSOPS_ALLOW_PRIVATE_WEBHOOKS=true/);
    assert.doesNotMatch(await message('https://user:pass@hooks.example.com/'), /WSOPS_ALLOW_PRIVATE_WEBHOOKS/);
    assert.match(await message('https://user:pass@hooks.example.com/'), /\[rule: userinfo\]$/);
    assert.doesNotMatch(await message('https://nx.example.com/'), /WSOPS_ALLOW_PRIVATE_WEBHOOKS/);
  });

  it('accepts a URL of exactly 2048 characters', async () => {
    const base = 'https://hooks.example.com/';
    const url = base + 'a'.repeat(2048 - base.length);
    assert.equal(url.length, 2048);
    await checkWebhookUrl(url, STRICT, fakeResolver());
    await assert.rejects(checkWebhookUrl(`${url}a`, STRICT, fakeResolver()), { extra: { param: 'url', rule: 'too_long' } });
  });

  it('gives up on a lookup that takes too long', async () => {
    const never: Resolver = () => new Promise(() => {});
    await assert.rejects(checkWebhookUrl('https://slow.example.com/', { allowPrivate: false, dnsTimeoutMs: 50 }, never), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.deepEqual(err.extra, { param: 'url', rule: 'unresolvable' });
      assert.match(err.message, /did not resolve within 0\.05 s/);
      return true;
    });
  });
});

describe('checkWebhookUrl with allowPrivate (WSOPS_ALLOW_PRIVATE_WEBHOOKS)', () => {
  const DEV = { allowPrivate: true };

  it('accepts http, any port, loopback and private addresses', async () => {
    const checked = await checkWebhookUrl('http://127.0.0.1:8080/hook', DEV, fakeResolver());
    assert.equal(checked.url.port, '8080');
    assert.deepEqual(checked.addresses, ['127.0.0.1']);
    assert.deepEqual((await checkWebhookUrl('http://localhost:3000/hook', DEV, fakeResolver())).addresses, ['127.0.0.1', '::1']);
    assert.deepEqual((await checkWebhookUrl('http://receiver:8080/', DEV, fakeResolver())).addresses, ['172.18.0.7']);
    assert.deepEqual((await checkWebhookUrl('https://api.example.com:8443/', DEV, fakeResolver())).addresses, ['10.0.0.5']);
    assert.deepEqual((await checkWebhookUrl('http://[::1]:9000/', DEV, fakeResolver())).addresses, ['::1']);
  });

  it('still refuses userinfo, other schemes, bad syntax and unresolvable hosts', async () => {
    const rule = async (url: string) => {
      try {
        await checkWebhookUrl(url, DEV, fakeResolver());
      } catch (err) {
        return (err as AppError).extra['rule'];
      }
      return 'ok';
    };
    assert.equal(await rule('http://user:pass@127.0.0.1:8080/hook'), 'userinfo');
    assert.equal(await rule('ftp://127.0.0.1/'), 'scheme');
    assert.equal(await rule('http://'), 'malformed');
    assert.equal(await rule('http://nx.example.com:8080/'), 'unresolvable');
    assert.equal(await rule('http://garbage.example/'), 'unresolvable');
    assert.equal(await rule(`http://127.0.0.1/${'a'.repeat(2048)}`), 'too_long');
  });
});

describe('isPublicAddress', () => {
  it('judges resolver answers', () => {
    for (const a of ['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) {
      assert.equal(isPublicAddress(a), true, a);
    }
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '::1',
      '::',
      'fe80::1',
      'fe80::1%eth0',
      'fd00::1',
      '::ffff:169.254.169.254',
      '2001::1',
      'example.com',
      '',
    ]) {
      assert.equal(isPublicAddress(a), false, a);
    }
    assert.equal(nonPublicReason('100.64.0.1'), 'a carrier-grade NAT (shared) address');
    assert.equal(nonPublicReason('fe80::1%eth0'), 'a scoped (zoned) IPv6 address');
    assert.equal(nonPublicReason('8.8.8.8'), null);
  });
});

describe('pinnedLookup', () => {
  const lookupOnce = (fn: ReturnType<typeof pinnedLookup>, options: Parameters<ReturnType<typeof pinnedLookup>>[1]) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family: number | undefined }>((resolve) =>
      fn('hooks.example.com', options, (err, address, family) => resolve({ err, address, family })),
    );

  it('answers with the first checked address, whatever the host name', async () => {
    const lookup = pinnedLookup(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    assert.deepEqual(await lookupOnce(lookup, {}), { err: null, address: '93.184.215.14', family: 4 });
    assert.deepEqual(await lookupOnce(lookup, { all: true }), {
      err: null,
      address: [{ address: '93.184.215.14', family: 4 }],
      family: undefined,
    });
  });

  it('respects a requested family', async () => {
    const lookup = pinnedLookup(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    assert.deepEqual(await lookupOnce(lookup, { family: 6 }), { err: null, address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 });
    const v4only = pinnedLookup(['93.184.215.14']);
    const { err } = await lookupOnce(v4only, { family: 6 });
    assert.equal(err?.code, 'ENOTFOUND');
  });

  it('refuses to pin nothing or a non-address', () => {
    assert.throws(() => pinnedLookup([]), TypeError);
    assert.throws(() => pinnedLookup(['example.com']), TypeError);
  });

  it('is used by net.connect instead of DNS', async () => {
    const net = await import('node:net');
    const server = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as import('node:net').AddressInfo;
    try {
      const remote = await new Promise<string | undefined>((resolve, reject) => {
        // The name does not exist; only the pinned lookup makes this connect.
        const socket = net.connect({ host: 'pinned.invalid', port, lookup: pinnedLookup(['127.0.0.1']) }, () => {
          resolve(socket.remoteAddress);
          socket.end();
        });
        socket.on('error', reject);
      });
      assert.equal(remote, '127.0.0.1');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
