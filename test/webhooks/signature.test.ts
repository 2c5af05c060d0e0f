/**
 * Webhook signatures (seed section 6, CONTRACT "Webhooks"): `t=<unix_seconds>,v1=<hex>[,v1=...]`,
 * HMAC-SHA256 over `<t>.` + raw body, 300 s tolerance, constant-time comparison. Cross-checked
 * with the `stripe` package, whose `Stripe-Signature` header has the same format.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { verifySignature, verifyWebhook, WebhookSignatureError, type WebhookSignatureReason } from '@wsops/client';
import Stripe from 'stripe';
import { DEFAULT_TOLERANCE_SECONDS, signatureHeader, signPayload } from '../../src/webhooks/signing/signature.js';

const SECRET = 'whsec_new_0123456789abcdef';
const OLD_SECRET = 'whsec_old_fedcba9876543210';
const T = 1_790_000_000;
const NOW = T * 1000;
const BODY = JSON.stringify({
  id: 'evt_01',
  type: 'asset.assigned',
  created: '2026-09-21T14:13:20Z',
  api_version: '1',
  data: { asset: { id: 'ast_1', asset_tag: 'LT-0042', status: 'ASSIGNED' }, assigned_user_id: 'usr_7', expected_return_at: null },
});

function rejectsWith(code: WebhookSignatureReason, fn: () => unknown): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof WebhookSignatureError, String(err));
    assert.equal(err.reason, code, err.message);
    assert.equal(err.name, 'WebhookSignatureError');
    return true;
  });
}

describe('signing', () => {
  it('signPayload is lowercase hex HMAC-SHA256 over "<t>." + raw body', () => {
    const expected = createHmac('sha256', SECRET).update(`${T}.${BODY}`).digest('hex');
    assert.equal(signPayload(SECRET, T, BODY), expected);
    assert.equal(signPayload(SECRET, T, Buffer.from(BODY)), expected);
    assert.match(expected, /^[0-9a-f]{64}$/);
  });

  it('signs the raw bytes, not a re-encoding', () => {
    const bytes = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0xa9, 0x22, 0x7d]); // {"a":"é"}
    assert.equal(signPayload(SECRET, T, bytes), signPayload(SECRET, T, '{"a":"é"}'));
    assert.notEqual(signPayload(SECRET, T, bytes), signPayload(SECRET, T, '{"a":"\\u00e9"}'));
  });

  it('signatureHeader carries t and one v1 per secret, new secret first', () => {
    assert.equal(signatureHeader([SECRET], T, BODY), `t=${T},v1=${signPayload(SECRET, T, BODY)}`);
    assert.equal(
      signatureHeader([SECRET, OLD_SECRET], T, BODY),
      `t=${T},v1=${signPayload(SECRET, T, BODY)},v1=${signPayload(OLD_SECRET, T, BODY)}`,
    );
  });

  it('refuses to sign with no secret or a timestamp that is not whole seconds', () => {
    assert.throws(() => signatureHeader([], T, BODY), TypeError);
    assert.throws(() => signPayload('', T, BODY), TypeError);
    assert.throws(() => signPayload(SECRET, 12.5, BODY), TypeError);
    assert.throws(() => signPayload(SECRET, -1, BODY), TypeError);
  });
});

describe('verifySignature', () => {
  const header = signatureHeader([SECRET], T, BODY);

  it('accepts what was signed, as string or bytes', () => {
    verifySignature(BODY, header, SECRET, { now: NOW });
    verifySignature(Buffer.from(BODY), header, SECRET, { now: NOW });
    verifySignature(new Uint8Array(Buffer.from(BODY)), header, [SECRET], { now: NOW });
  });

  it('tolerance: exactly 300 s either way is accepted, 301 s is not', () => {
    verifySignature(BODY, header, SECRET, { now: NOW + 300_000 });
    verifySignature(BODY, header, SECRET, { now: NOW - 300_000 });
    rejectsWith('timestamp_out_of_tolerance', () => verifySignature(BODY, header, SECRET, { now: NOW + 301_000 }));
    rejectsWith('timestamp_out_of_tolerance', () => verifySignature(BODY, header, SECRET, { now: NOW - 301_000 })); // t in the future
    rejectsWith('timestamp_out_of_tolerance', () => verifySignature(BODY, header, SECRET, { now: NOW + 300_001 }));
  });

  it('tolerance can be set', () => {
    verifySignature(BODY, header, SECRET, { now: NOW + 600_000, toleranceSeconds: 600 });
    rejectsWith('timestamp_out_of_tolerance', () => verifySignature(BODY, header, SECRET, { now: NOW + 11_000, toleranceSeconds: 10 }));
  });

  it('defaults now to the clock', () => {
    const t = Math.floor(Date.now() / 1000);
    verifySignature(BODY, signatureHeader([SECRET], t, BODY), SECRET);
    rejectsWith('timestamp_out_of_tolerance', () => verifySignature(BODY, signatureHeader([SECRET], t - 3600, BODY), SECRET));
  });

  it('rotation: accepts when only the second v1 matches', () => {
    const rotated = signatureHeader([SECRET, OLD_SECRET], T, BODY);
    verifySignature(BODY, rotated, OLD_SECRET, { now: NOW }); // a receiver still on the old secret
    verifySignature(BODY, rotated, SECRET, { now: NOW });
    const junkFirst = `t=${T},v1=${'0'.repeat(64)},v1=${signPayload(SECRET, T, BODY)}`;
    verifySignature(BODY, junkFirst, SECRET, { now: NOW });
  });

  it('multiple secrets on the receiver side: any one may match', () => {
    verifySignature(BODY, header, [OLD_SECRET, SECRET], { now: NOW });
    verifySignature(BODY, signatureHeader([OLD_SECRET], T, BODY), [SECRET, OLD_SECRET], { now: NOW });
    rejectsWith('no_matching_signature', () => verifySignature(BODY, header, [OLD_SECRET, 'whsec_other'], { now: NOW }));
  });

  it('rejects a tampered body, timestamp, signature or wrong secret', () => {
    rejectsWith('no_matching_signature', () => verifySignature(`${BODY} `, header, SECRET, { now: NOW }));
    rejectsWith('no_matching_signature', () => verifySignature(BODY.replace('usr_7', 'usr_8'), header, SECRET, { now: NOW }));
    rejectsWith('no_matching_signature', () => verifySignature(BODY, header.replace(`t=${T}`, `t=${T + 1}`), SECRET, { now: NOW }));
    const sig = signPayload(SECRET, T, BODY);
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`;
    rejectsWith('no_matching_signature', () => verifySignature(BODY, `t=${T},v1=${flipped}`, SECRET, { now: NOW }));
    rejectsWith('no_matching_signature', () => verifySignature(BODY, header, 'whsec_wrong', { now: NOW }));
  });

  it('a v1 of the wrong length, non-hex or upper-case simply does not match', () => {
    const sig = signPayload(SECRET, T, BODY);
    for (const v1 of [sig.slice(0, 63), `${sig}0`, '', 'zz', sig.toUpperCase(), `${sig.slice(0, 62)}é`]) {
      rejectsWith('no_matching_signature', () => verifySignature(BODY, `t=${T},v1=${v1}`, SECRET, { now: NOW }));
    }
  });

  it('missing header', () => {
    rejectsWith('missing_header', () => verifySignature(BODY, undefined, SECRET, { now: NOW }));
    rejectsWith('missing_header', () => verifySignature(BODY, '', SECRET, { now: NOW }));
    rejectsWith('missing_header', () => verifySignature(BODY, '   ', SECRET, { now: NOW }));
  });

  it('missing t, missing v1, t not an integer: each rejected with its reason', () => {
    const sig = signPayload(SECRET, T, BODY);
    rejectsWith('missing_timestamp', () => verifySignature(BODY, `v1=${sig}`, SECRET, { now: NOW }));
    rejectsWith('missing_signature', () => verifySignature(BODY, `t=${T}`, SECRET, { now: NOW }));
    rejectsWith('missing_signature', () => verifySignature(BODY, `t=${T},v0=${sig}`, SECRET, { now: NOW }));
    rejectsWith('invalid_timestamp', () => verifySignature(BODY, `t=12.5,v1=${sig}`, SECRET, { now: NOW }));
    rejectsWith('invalid_timestamp', () => verifySignature(BODY, `t=abc,v1=${sig}`, SECRET, { now: NOW }));
    rejectsWith('invalid_timestamp', () => verifySignature(BODY, `t=-${T},v1=${sig}`, SECRET, { now: NOW }));
    rejectsWith('invalid_timestamp', () => verifySignature(BODY, `t=,v1=${sig}`, SECRET, { now: NOW }));
    rejectsWith('invalid_timestamp', () => verifySignature(BODY, `t=1e9,v1=${sig}`, SECRET, { now: NOW }));
    rejectsWith('invalid_timestamp', () => verifySignature(BODY, `t=${T},t=${T},v1=${sig}`, SECRET, { now: NOW }));
    rejectsWith('missing_timestamp', () => verifySignature(BODY, sig, SECRET, { now: NOW }));
  });

  it('the server documents the tolerance the verifier applies by default', () => {
    assert.equal(DEFAULT_TOLERANCE_SECONDS, 300);
    verifySignature(BODY, header, SECRET, { now: NOW + DEFAULT_TOLERANCE_SECONDS * 1000 });
    rejectsWith('timestamp_out_of_tolerance', () =>
      verifySignature(BODY, header, SECRET, { now: NOW + DEFAULT_TOLERANCE_SECONDS * 1000 + 1 }),
    );
  });

  it('trims whitespace around parts and ignores unknown parts', () => {
    const sig = signPayload(SECRET, T, BODY);
    verifySignature(BODY, ` t = ${T} ,  v1=${sig} `, SECRET, { now: NOW });
    verifySignature(BODY, `t=${T}, v1=${sig}`, SECRET, { now: NOW });
    verifySignature(BODY, `v0=abc,t=${T},scheme=x,v1=${sig},v2=zzz,garbage`, SECRET, { now: NOW });
    verifySignature(BODY, `v1=${sig},t=${T}`, SECRET, { now: NOW }); // order does not matter
  });

  it('refuses to run without a secret', () => {
    assert.throws(() => verifySignature(BODY, header, [], { now: NOW }), TypeError);
    assert.throws(() => verifySignature(BODY, header, '', { now: NOW }), TypeError);
  });
});

describe('verifyWebhook', () => {
  it('returns the parsed event', () => {
    const event = verifyWebhook(Buffer.from(BODY), signatureHeader([SECRET], T, BODY), [SECRET], { now: NOW });
    assert.equal(event.id, 'evt_01');
    assert.equal(event.type, 'asset.assigned');
    assert.deepEqual(event, JSON.parse(BODY));
  });

  it('throws WebhookSignatureError before parsing when the signature is wrong', () => {
    rejectsWith('no_matching_signature', () => verifyWebhook('not json', signatureHeader([SECRET], T, BODY), SECRET, { now: NOW }));
    rejectsWith('timestamp_out_of_tolerance', () =>
      verifyWebhook(BODY, signatureHeader([SECRET], T, BODY), SECRET, { now: NOW + 301_000 }),
    );
  });

  it('a signed body that is not a JSON object is refused as invalid_body', () => {
    for (const body of ['not json', '[1,2]', 'null', '"x"']) {
      rejectsWith('invalid_body', () => verifyWebhook(body, signatureHeader([SECRET], T, body), SECRET, { now: NOW }));
    }
    const invalidUtf8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);
    rejectsWith('invalid_body', () => verifyWebhook(invalidUtf8, signatureHeader([SECRET], T, invalidUtf8), SECRET, { now: NOW }));
  });
});

describe('cross-check with the stripe package (same header format, no network)', () => {
  const stripe = new Stripe('sk_test_x');

  it('stripe.webhooks.constructEvent accepts our header', () => {
    const t = Math.floor(Date.now() / 1000); // Stripe checks against its own clock
    const event = stripe.webhooks.constructEvent(BODY, signatureHeader([SECRET], t, BODY), SECRET);
    assert.deepEqual(event, JSON.parse(BODY));
    // With two v1 entries, Stripe also accepts the one made with the old secret.
    stripe.webhooks.constructEvent(Buffer.from(BODY), signatureHeader([SECRET, OLD_SECRET], t, BODY), OLD_SECRET);
    assert.throws(() => stripe.webhooks.constructEvent(`${BODY} `, signatureHeader([SECRET], t, BODY), SECRET));
  });

  it('our verifySignature accepts a header from stripe.webhooks.generateTestHeaderString', () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: SECRET, timestamp: T });
    assert.match(header, new RegExp(`^t=${T},v1=[0-9a-f]{64}$`));
    verifySignature(BODY, header, SECRET, { now: NOW });
    assert.equal(header, signatureHeader([SECRET], T, BODY));
    const event = verifyWebhook(BODY, stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: SECRET }), SECRET);
    assert.equal(event.id, 'evt_01');
    rejectsWith('no_matching_signature', () => verifySignature(BODY, header, OLD_SECRET, { now: NOW }));
  });
});
