/**
 * SCIM to the letter of RFC 7643/7644, as a strict client sees it: a client that builds its
 * model of a User from the service's own /Schemas and validates every response with it runs the
 * whole cycle (create, get, filter, list, replace, PATCH add/replace/remove, delete) for
 * userNames that are not addresses as well as for addresses; the discovery documents carry only
 * what their schemas declare; errors carry exactly the RFC's members; and the edges issue 57
 * named hold.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from '#kysely';
import { DIALECTS } from '../helpers/databases.js';
import { ROOT } from '../helpers/processes.js';
import { type Answer, ENTERPRISE, ERROR, PATCH_OP, type ScimServer, startScimServer, USER } from './helpers.js';

interface SchemaAttribute {
  name: string;
  type: string;
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: string;
  returned: string;
  uniqueness: string;
  subAttributes?: SchemaAttribute[];
  referenceTypes?: string[];
}

const TYPES: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  boolean: (v) => typeof v === 'boolean',
  reference: (v) => typeof v === 'string',
  complex: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};

/** A model of a resource built from /Schemas alone, as a strict client builds it. */
class StrictModel {
  constructor(private readonly schemas: Map<string, SchemaAttribute[]>) {
    for (const [id, attributes] of schemas) this.checkDeclared(attributes, id);
  }

  /** Every characteristic RFC 7643 §7 names is there; a reference names what it may refer to. */
  private checkDeclared(attributes: SchemaAttribute[], where: string): void {
    for (const a of attributes) {
      for (const k of ['name', 'type', 'multiValued', 'description', 'required', 'caseExact', 'mutability', 'returned', 'uniqueness']) {
        assert.ok(k in a, `${where}.${a.name} declares ${k}`);
      }
      assert.ok(a.type in TYPES, `${where}.${a.name}: a type the model knows (${a.type})`);
      if (a.type === 'reference')
        assert.ok(Array.isArray(a.referenceTypes) && a.referenceTypes.length > 0, `${where}.${a.name} referenceTypes`);
      if (a.type === 'complex') {
        assert.ok(a.subAttributes?.length, `${where}.${a.name} subAttributes`);
        this.checkDeclared(a.subAttributes ?? [], `${where}.${a.name}`);
      }
    }
  }

  /** Validates a User as the model says: only declared attributes, of their declared types, required ones present. */
  validate(resource: Record<string, unknown>): void {
    assert.ok(Array.isArray(resource.schemas), 'schemas');
    const core = this.schemas.get(USER) as SchemaAttribute[];
    for (const [key, value] of Object.entries(resource)) {
      if (key === 'schemas' || key === 'meta') continue;
      if (this.schemas.has(key)) {
        assert.ok((resource.schemas as string[]).includes(key), `${key} is listed in schemas`);
        this.object(value, this.schemas.get(key) as SchemaAttribute[], key);
        continue;
      }
      this.value(value, this.attribute(core, key, 'User'), key);
    }
    for (const a of core) if (a.required) assert.ok(resource[a.name] !== undefined, `required ${a.name}`);
  }

  private attribute(attributes: SchemaAttribute[], name: string, where: string): SchemaAttribute {
    const found = attributes.find((a) => a.name.toLowerCase() === name.toLowerCase());
    assert.ok(found, `${where} declares ${name}`);
    return found;
  }

  private object(value: unknown, attributes: SchemaAttribute[], where: string): void {
    assert.ok(TYPES.complex?.(value), `${where} is an object`);
    for (const [k, v] of Object.entries(value as object)) this.value(v, this.attribute(attributes, k, where), `${where}.${k}`);
  }

  private value(value: unknown, a: SchemaAttribute, where: string): void {
    if (a.multiValued) {
      assert.ok(Array.isArray(value), `${where} is multi-valued`);
      for (const item of value as unknown[]) this.single(item, a, `${where}[]`);
    } else this.single(value, a, where);
  }

  private single(value: unknown, a: SchemaAttribute, where: string): void {
    assert.ok(TYPES[a.type]?.(value), `${where} is a ${a.type}: ${JSON.stringify(value)}`);
    if (a.type === 'complex') this.object(value, a.subAttributes ?? [], where);
  }
}

/** The RFC's error members, and nothing else. */
function rfcError(answer: Answer, status: number, scimType?: string): void {
  assert.equal(answer.status, status, answer.text);
  const allowed = new Set(['schemas', 'status', 'scimType', 'detail']);
  for (const k of Object.keys(answer.json)) assert.ok(allowed.has(k), `error member ${k}`);
  assert.deepEqual(answer.json.schemas, [ERROR]);
  assert.equal(answer.json.status, String(status));
  assert.equal(answer.json.scimType, scimType);
  assert.match(answer.headers.get('x-request-id') ?? '', /\S/, 'the request id travels in a header');
}

const patch = (...ops: unknown[]) => ({ schemas: [PATCH_OP], Operations: ops });

for (const dialect of DIALECTS) {
  describe(`SCIM to the letter of RFC 7643/7644 [${dialect}]`, () => {
    let s: ScimServer;
    let model: StrictModel;
    before(async () => {
      s = await startScimServer(dialect);
      const listed = await s.scim('GET', '/Schemas');
      assert.equal(listed.status, 200, listed.text);
      model = new StrictModel(
        new Map(listed.json.Resources.map((r: { id: string; attributes: SchemaAttribute[] }) => [r.id, r.attributes])),
      );
    });
    after(async () => s?.close());

    it('discovery documents carry only what their schemas declare, each with meta; the manager reference names User', async () => {
      const config = await s.scim('GET', '/ServiceProviderConfig');
      const declared = [
        'schemas',
        'documentationUri',
        'patch',
        'bulk',
        'filter',
        'changePassword',
        'sort',
        'etag',
        'authenticationSchemes',
        'meta',
      ];
      for (const k of Object.keys(config.json)) assert.ok(declared.includes(k), `ServiceProviderConfig member ${k}`);
      assert.equal(config.json.meta.resourceType, 'ServiceProviderConfig');
      for (const path of ['/ResourceTypes', '/Schemas']) {
        for (const r of (await s.scim('GET', path)).json.Resources) assert.ok(r.meta?.location, `${path} ${r.id} has meta`);
      }
      const enterprise = await s.scim('GET', `/Schemas/${ENTERPRISE}`);
      const ref = enterprise.json.attributes
        .find((a: SchemaAttribute) => a.name === 'manager')
        .subAttributes.find((a: SchemaAttribute) => a.name === '$ref');
      assert.deepEqual(ref.referenceTypes, ['User']);
    });

    it('errors carry exactly schemas, status, scimType and detail; the request id is the X-Request-Id header', async () => {
      rfcError(await s.scim('GET', '/Users/per_nobody'), 404);
      rfcError(await s.scim('GET', `/Users?filter=${encodeURIComponent('nonsense eq')}`), 400, 'invalidFilter');
      rfcError(await s.scim('POST', '/Users', { schemas: [USER] }), 400, 'invalidValue');
      rfcError(await s.scim('GET', '/Users', undefined, 'svc_scim_test_nope'), 401);
    });

    for (const kind of ['a login that is not an address', 'an address'] as const) {
      it(`the whole cycle through a strict client, for userNames that are ${kind}`, async () => {
        const tag = randomBytes(4).toString('hex');
        const userName = kind === 'an address' ? `Kim.${tag}@Example.com` : `kim-${tag}`;
        const email = `kim.${tag}@example.com`;
        const created = await s.scim('POST', '/Users', {
          schemas: [USER, ENTERPRISE],
          userName,
          externalId: `okta-${tag}`,
          name: { givenName: 'Kim', familyName: 'Lee' },
          emails: [{ value: email, type: 'work', primary: true }],
          [ENTERPRISE]: { employeeNumber: `E-${tag}` },
        });
        assert.equal(created.status, 201, created.text);
        model.validate(created.json);
        const id = created.json.id as string;
        assert.equal(created.json.userName, userName);
        assert.equal((await s.api(`/people/${id}`)).json.work_email, email, 'the work email comes from emails');

        const got = await s.scim('GET', `/Users/${id}`);
        model.validate(got.json);
        const found = await s.scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${userName.toUpperCase()}"`)}`);
        assert.equal(found.json.totalResults, 1, 'userName compares ignoring case');
        for (const r of found.json.Resources) model.validate(r);
        rfcError(
          await s.scim('POST', '/Users', {
            schemas: [USER],
            userName: userName.toLowerCase(),
            emails: [{ value: `x${email}`, type: 'work' }],
          }),
          409,
          'uniqueness',
        );
        const listed = await s.scim('GET', '/Users?count=5');
        for (const r of listed.json.Resources) model.validate(r);

        const replaced = await s.scim('PUT', `/Users/${id}`, {
          schemas: [USER],
          userName,
          title: 'Lead',
          name: { givenName: 'Kimberly', familyName: 'Lee' },
        });
        assert.equal(replaced.status, 200, replaced.text);
        model.validate(replaced.json);
        assert.equal(replaced.json.emails[0].value, email, 'a PUT that leaves emails out keeps the work email');

        const other = `kim.other.${tag}@example.com`;
        const patched = await s.scim(
          'PATCH',
          `/Users/${id}`,
          patch(
            { op: 'add', path: 'emails', value: [{ value: other, type: 'work' }] },
            { op: 'replace', path: 'title', value: 'Principal' },
            { op: 'add', path: 'phoneNumbers', value: [{ value: '+44 20 7946 0000', type: 'work' }] },
            { op: 'remove', path: 'name.givenName' },
            { op: 'replace', path: `${ENTERPRISE}:employeeNumber`, value: `F-${tag}` },
          ),
        );
        assert.equal(patched.status, 200, patched.text);
        model.validate(patched.json);
        assert.deepEqual(
          patched.json.emails,
          [{ value: other, type: 'work', primary: true }],
          'add to emails adds: the new work email is kept',
        );
        assert.equal(patched.json.title, 'Principal');
        assert.equal(patched.json.phoneNumbers[0].value, '+44 20 7946 0000');
        assert.equal(patched.json.name.givenName, '');
        assert.equal(patched.json[ENTERPRISE].employeeNumber, `F-${tag}`);
        assert.equal(patched.json.userName, userName, 'userName is apart from the email');

        const byEntry = await s.scim('GET', `/Users?filter=${encodeURIComponent(`emails[type eq "work" and value eq "${other}"]`)}`);
        assert.equal(byEntry.status, 200, byEntry.text);
        assert.deepEqual(
          byEntry.json.Resources.map((r: { id: string }) => r.id),
          [id],
        );

        assert.equal((await s.scim('DELETE', `/Users/${id}`)).status, 204);
        rfcError(await s.scim('GET', `/Users/${id}`), 404);
      });
    }

    it('a SCIM write on a full disk is 503 with Retry-After, in the RFC error shape, as on every write path', async () => {
      const database = s.h.services.database;
      const raw = database.sqlite;
      let undo: () => Promise<void>;
      if (raw) {
        // Not one page more than the database holds now: the writes below soon need one.
        const pages = (raw.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
        raw.exec(`PRAGMA max_page_count = ${pages}`);
        undo = async () => void raw.exec('PRAGMA max_page_count = 1073741823');
      } else {
        await sql
          .raw(`CREATE FUNCTION test_scim_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`)
          .execute(database.db);
        await sql`CREATE TRIGGER test_scim_disk_full BEFORE INSERT ON records FOR EACH ROW EXECUTE FUNCTION test_scim_disk_full()`.execute(
          database.db,
        );
        undo = async () => {
          await sql`DROP TRIGGER test_scim_disk_full ON records`.execute(database.db);
          await sql`DROP FUNCTION test_scim_disk_full()`.execute(database.db);
        };
      }
      try {
        let answer: Answer | undefined;
        for (let i = 0; i < 200 && answer?.status !== 503; i++) {
          answer = await s.scim('POST', '/Users', {
            schemas: [USER],
            userName: `full-${i}-${randomBytes(3).toString('hex')}@example.com`,
            title: 'Quay '.repeat(190),
          });
          assert.ok(answer.status === 201 || answer.status === 503, answer.text);
        }
        rfcError(answer as Answer, 503);
        assert.ok(Number((answer as Answer).headers.get('retry-after')) > 0);
        assert.match((answer as Answer).json.detail, /disk is full/);
      } finally {
        await undo();
      }
    });

    it('a PATCH path whose value filter is compound (and) selects the entry it names', async () => {
      const tag = randomBytes(3).toString('hex');
      const made = await s.scim('POST', '/Users', {
        schemas: [USER],
        userName: `path-${tag}`,
        emails: [{ value: `a.${tag}@example.com`, type: 'work' }],
      });
      assert.equal(made.status, 201, made.text);
      const patched = await s.scim(
        'PATCH',
        `/Users/${made.json.id}`,
        patch({ op: 'replace', path: `emails[type eq "work" and value eq "a.${tag}@example.com"].value`, value: `b.${tag}@example.com` }),
      );
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.json.emails[0].value, `b.${tag}@example.com`);
    });

    it('a userName that is not an address, with no email at all, is refused saying what to send', async () => {
      const refused = await s.scim('POST', '/Users', { schemas: [USER], userName: `emp-${randomBytes(3).toString('hex')}` });
      rfcError(refused, 400, 'invalidValue');
      assert.match(refused.json.detail, /emails/);
    });

    it("Entra's Add of a manager replaces one already there; a User cannot be their own manager", async () => {
      const make = async (n: string) => {
        const r = await s.scim('POST', '/Users', { schemas: [USER], userName: `${n}.${randomBytes(3).toString('hex')}@example.com` });
        assert.equal(r.status, 201, r.text);
        return r.json.id as string;
      };
      const [user, first, second] = [await make('report'), await make('boss1'), await make('boss2')];
      const add = (value: unknown) => s.scim('PATCH', `/Users/${user}`, patch({ op: 'Add', path: `${ENTERPRISE}:manager`, value }));
      assert.equal((await add(first)).status, 200);
      const again = await add(second);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.json[ENTERPRISE].manager.value, second);
      rfcError(await add(user), 400, 'invalidValue');
    });

    it('a person a SCIM DELETE kept INACTIVE releases its userName: another User may take it, and a filter finds that one', async () => {
      const tag = randomBytes(3).toString('hex');
      const kept = await s.scim('POST', '/Users', {
        schemas: [USER],
        userName: `kept-${tag}`,
        emails: [{ value: `kept.${tag}@example.com`, type: 'work' }],
      });
      const report = await s.scim('POST', '/Users', {
        schemas: [USER, ENTERPRISE],
        userName: `report-${tag}@example.com`,
        [ENTERPRISE]: { manager: { value: kept.json.id } },
      });
      assert.equal(report.status, 201, report.text);
      assert.equal((await s.scim('DELETE', `/Users/${kept.json.id}`)).status, 204);
      assert.equal((await s.api(`/people/${kept.json.id}`)).json.status, 'INACTIVE', 'kept: others name it');
      const renamed = await s.scim('PATCH', `/Users/${report.json.id}`, patch({ op: 'replace', path: 'userName', value: `KEPT-${tag}` }));
      assert.equal(renamed.status, 200, renamed.text);
      const found = await s.scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "kept-${tag}"`)}`);
      assert.deepEqual(
        found.json.Resources.map((r: { id: string }) => r.id),
        [report.json.id],
      );
    });

    it('SCIM tokens are found by both secretlint rules (the pattern and the checksum), a corrupted one by neither', () => {
      const dir = mkdtempSync(join(tmpdir(), 'wsops-scim-secretlint-'));
      try {
        const at = 40;
        const corrupted = s.token.slice(0, at) + (s.token[at] === 'x' ? 'y' : 'x') + s.token.slice(at + 1);
        writeFileSync(join(dir, 'leaked.env'), `OKTA_SCIM_TOKEN=${s.token}\n`);
        writeFileSync(join(dir, 'corrupted.env'), `OKTA_SCIM_TOKEN=${corrupted}\n`);
        const scan = (file: string, config: string) =>
          spawnSync(
            process.execPath,
            [join(ROOT, 'node_modules/secretlint/bin/secretlint.js'), '--secretlintrc', join(ROOT, config), '--format', 'json', file],
            {
              cwd: dir,
              encoding: 'utf8',
            },
          );
        for (const config of ['docs/secretlint/.secretlintrc.json', 'docs/secretlint/.secretlintrc.checksum.json']) {
          const leaked = scan('leaked.env', config);
          assert.equal(leaked.status, 1, `${config} reports the token: ${leaked.stdout} ${leaked.stderr}`);
        }
        assert.equal(
          scan('corrupted.env', 'docs/secretlint/.secretlintrc.checksum.json').status,
          0,
          'the checksum rule ignores a corrupted token',
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
