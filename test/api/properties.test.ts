/**
 * Property tests: hostile input never produces a 5xx; keyset walks never skip or repeat a record
 * that stayed unchanged while others were written; an updated_since walk from the watermark
 * less an overlap returns every record changed since.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { assets, REGISTERS } from '../../src/registers/catalogue.js';
import { nextStamp } from '../../src/writes/next-stamp.js';
import { DIALECTS } from '../helpers/databases.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const RUNS = Number(process.env.WSOPS_PROPERTY_RUNS ?? 150);

/** Every generated string may hold NUL and lone surrogates: the characters databases and encoders trip on. */
const hostileUnit = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF') },
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' }) },
);
const hostileString = (maxLength: number) => fc.string({ unit: hostileUnit, maxLength });

/**
 * encodeURIComponent, except for lone surrogates (which it refuses): those are sent as their
 * WTF-8 bytes, as a hostile client would.
 */
function encodeHostile(s: string): string {
  let out = '';
  // The string iterator yields a surrogate pair as one character and a lone surrogate alone.
  for (const c of s) {
    const u = c.charCodeAt(0);
    out +=
      c.length === 1 && u >= 0xd800 && u <= 0xdfff
        ? [0xe0 | (u >> 12), 0x80 | ((u >> 6) & 0x3f), 0x80 | (u & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('')
        : encodeURIComponent(c);
  }
  return out;
}

for (const dialect of DIALECTS) {
  describe(`properties [${dialect}]`, () => {
    let h: Harness;
    let ws: string;
    let key: string;
    let realCursor: string;
    before(async () => {
      h = await createHarness(dialect);
      ws = await h.workspace();
      ({ key } = await h.key(ws));
      realCursor = (await h.get('/api/v1/assets?limit=1', key)).json.next_cursor;
    });
    after(() => h.close());

    it('random and hostile query strings, headers, ids and cursors get a 4xx problem or a 200, never a 5xx', async () => {
      const paramName = fc.oneof(
        fc.constantFrom(
          'limit',
          'cursor',
          'updated_since',
          'search',
          'status',
          'category',
          'location_id',
          'record_type',
          'limit[]',
          '__proto__',
          'constructor',
        ),
        hostileString(12),
      );
      const paramValue = fc.oneof(
        hostileString(40),
        fc.string({ maxLength: 20, unit: 'grapheme' }),
        fc.constantFrom(
          '',
          '0',
          '-1',
          '1e3',
          '1000',
          '1001',
          'NaN',
          '%00',
          '%',
          '%E0%A4%A',
          '\u0000',
          'null',
          '[]',
          '{}',
          'ASSIGNED',
          '2026-01-01T00:00:00Z',
        ),
        fc.constant(realCursor),
        hostileString(60).map((s) => `${realCursor.slice(0, 30)}${s}`),
        hostileString(6).map((s) => `${realCursor}${s}`),
        fc.nat({ max: 5000 }).map(String),
      );
      const query = fc
        .array(fc.tuple(paramName, paramValue, fc.boolean()), { maxLength: 5 })
        .map((pairs) => pairs.map(([k, v, raw]) => (raw ? `${k}=${v}` : `${encodeHostile(k)}=${encodeHostile(v)}`)).join('&'));
      const path = fc.oneof(
        fc.constantFrom(...REGISTERS.map((r) => `/api/v1/${r.path}`), '/api/v1/scopes'),
        fc.tuple(fc.constantFrom(...REGISTERS), hostileString(50)).map(([r, id]) => `/api/v1/${r.path}/${encodeHostile(id)}`),
        fc.tuple(fc.constantFrom(...REGISTERS), hostileString(10)).map(([r, id]) => `/api/v1/${r.path}/${r.idPrefix}_${encodeHostile(id)}`),
        hostileString(30).map((s) => `/api/v1/${encodeHostile(s)}`),
      );
      const printable = fc.string({ maxLength: 80 }).map((s) => s.replace(/[^\x20-\x7e]/g, ''));
      const auth = fc.oneof(
        fc.constant(`Bearer ${key}`),
        printable,
        printable.map((s) => `Bearer ${s}`),
        fc.constant(`Bearer ${key.slice(0, -1)}`),
        fc.constant(`bearer  ${key}`),
      );
      await fc.assert(
        fc.asyncProperty(path, query, auth, printable, async (p, q, a, extra) => {
          // h.get also checks every answer against the served OpenAPI document.
          const res = await h.get(q ? `${p}?${q}` : p, undefined, { authorization: a, 'x-extra': extra, accept: extra || '*/*' });
          assert.ok(res.status < 500, `${res.status} for ${p}?${q}: ${res.body.slice(0, 200)}`);
          if (res.status >= 400) {
            assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
            const body = JSON.parse(res.body);
            assert.equal(body.status, res.status);
            assert.ok(body.code && body.detail && body.request_id);
          }
        }),
        { numRuns: RUNS * 3 },
      );
    });

    it('keyset walks with random limits never skip or repeat a record that stayed unchanged while others were written', async () => {
      const ids = (await h.get('/api/v1/assets?limit=1000', key)).json.data.map((r: { id: string }) => r.id) as string[];
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: 15 }), { minLength: 1, maxLength: 60 }),
          fc.array(fc.tuple(fc.nat({ max: ids.length - 1 }), fc.boolean()), { maxLength: 40 }),
          async (limits, writes) => {
            const touched = new Set<string>();
            const seen: string[] = [];
            let cursor: string | undefined;
            let step = 0;
            do {
              const limit = limits[step % limits.length];
              const res = await h.get(`/api/v1/assets?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, key);
              assert.equal(res.status, 200);
              seen.push(...res.json.data.map((r: { id: string }) => r.id));
              cursor = res.json.next_cursor ?? undefined;
              // Between pages, other writers change records (some already seen, some not yet).
              const write = writes[step];
              if (write) {
                const id = ids[write[0]] as string;
                const record = await h.services.records.get(ws, assets, id);
                if (record) {
                  h.clock.advance(write[1] ? 1 : 0);
                  touched.add(id);
                  await h.services.records.put(ws, assets, { ...record, updated_at: nextStamp(record.updated_at as string, h.clock()) });
                }
              }
              step++;
            } while (cursor);
            for (const id of ids) {
              if (touched.has(id)) continue;
              assert.equal(seen.filter((x) => x === id).length, 1, `unchanged record ${id} seen exactly once`);
            }
          },
        ),
        { numRuns: Math.max(10, Math.floor(RUNS / 6)) },
      );
    });

    it('an updated_since walk from the watermark less an overlap returns every record changed since, even ones stamped before commit', async () => {
      const OVERLAP_MS = 5 * 60_000;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.nat({ max: 10_000 }), fc.integer({ min: 0, max: OVERLAP_MS - 1 })), { minLength: 1, maxLength: 15 }),
          async (writes) => {
            const all = (await h.get('/api/v1/assets?limit=1000', key)).json.data as { id: string; updated_at: string }[];
            const watermark = all
              .map((r) => r.updated_at)
              .sort()
              .at(-1) as string;
            h.clock.set(Math.max(h.clock(), Date.parse(watermark)) + 1000);
            const changed = new Set<string>();
            for (const [pick, lag] of writes) {
              const record = all[pick % all.length] as Record<string, unknown>;
              // Stamped at write time, committed later: the stamp may lag the watermark's walk.
              const stamp = new Date(Math.max(Date.parse(watermark) - lag, Date.parse(record.updated_at as string) + 1)).toISOString();
              await h.services.records.put(ws, assets, { ...record, updated_at: stamp });
              changed.add(record.id as string);
            }
            const since = new Date(Date.parse(watermark) - OVERLAP_MS).toISOString();
            const got = new Set<string>();
            let cursor: string | undefined;
            do {
              const res = await h.get(
                `/api/v1/assets?limit=7&updated_since=${since}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
                key,
              );
              for (const r of res.json.data) got.add(r.id);
              cursor = res.json.next_cursor ?? undefined;
            } while (cursor);
            for (const id of changed) assert.ok(got.has(id), `changed record ${id} returned by the sync walk`);
          },
        ),
        { numRuns: Math.max(10, Math.floor(RUNS / 6)) },
      );
    });
  });
}
