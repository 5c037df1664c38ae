/**
 * The attribute buckets' behaviour over HTTP, one body run on every storage: PGlite here
 * (attributes.test.ts), Postgres in the integration run (attributes.postgres.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { expectStatus } from '../helpers/expect-status.ts';
import type { CallOptions, TestService } from '../helpers/service.ts';
import { attributesConcurrency } from './attributes.concurrency.ts';
import { attributesLimits } from './attributes.limits.ts';
import { attributesQuery } from './attributes.query.ts';
import { attributesValues } from './attributes.values.ts';

export interface AttributesSuiteOptions {
  /** A service with `attributes(SUITE_OPTIONS)` and one organization. */
  start(): Promise<TestService>;
  /**
   * Holds the lock of one organization's bucket row, from outside the service's requests, for `ms`;
   * resolves once the lock is held, with a promise of its release (wrapped: a promise resolved with a
   * promise would wait for it).
   */
  holdBucketLock(
    t: TestService,
    orgId: string,
    bucket: string,
    ms: number,
  ): Promise<{ released: Promise<void> }>;
  /** Whether reads go on while a write holds a lock (Postgres); PGlite has one connection and queues them. */
  readsDuringLock: boolean;
}

/** The plugin options every run of the suite uses: a read-only bucket and small limits to reach. */
export const SUITE_OPTIONS = {
  buckets: [
    { name: 'plan', organizationAccess: 'read_only' as const, endUserPermissions: 'read_only' as const },
  ],
  maxAttributesPerBucket: 50,
  maxCustomBuckets: 3,
};

const RW = '/organizations/attributes/end_user_read_write';

export function attributesSuite(label: string, o: AttributesSuiteOptions) {
  let t: TestService;
  beforeAll(async () => {
    t = await o.start();
  });
  afterAll(async () => {
    await t?.stop();
  });
  const call = (method: string, path: string, opts?: CallOptions) => t.call(method, path, opts);
  const read = async (path = RW) => {
    const r = await call('GET', path);
    await expectStatus(r, 200);
    return r.json.result;
  };
  /** Another organization with its own key: `call` options that act as it. */
  const anotherOrganization = async (name = 'Other') => {
    const other = await t.service.ctx.orgs.create(name);
    return { id: other.organization.id, as: { orgId: other.organization.id, key: other.apiKey } };
  };

  describe(`attribute buckets on ${label}: one bucket`, () => {
    it('replaces the whole set on PUT: keys not sent are deleted', async () => {
      await expectStatus(await call('PUT', RW, { body: { a: 1, b: 2, c: 3 } }), 204);
      await expectStatus(await call('PUT', RW, { body: { b: 20, d: 4 } }), 204);
      expect(await read()).toEqual({ b: 20, d: 4 });
    });

    it('empties the bucket on a PUT of {}', async () => {
      await call('PUT', RW, { body: { a: 1 } });
      await expectStatus(await call('PUT', RW, { body: {} }), 204);
      expect(await read()).toEqual({});
    });

    it('merges on PATCH, leaving what is not sent untouched', async () => {
      await call('PUT', RW, { body: { a: 1, b: 2 } });
      await expectStatus(await call('PATCH', RW, { body: { b: 3, c: { deep: [1, 2] } } }), 204);
      expect(await read()).toEqual({ a: 1, b: 3, c: { deep: [1, 2] } });
    });

    it('stores JSON null for a PATCH value of null (it does not delete the key)', async () => {
      await call('PUT', RW, { body: { a: 1, b: 2 } });
      await call('PATCH', RW, { body: { a: null } });
      const result = await read();
      expect(result).toEqual({ a: null, b: 2 });
      expect(Object.hasOwn(result, 'a')).toBe(true);
    });

    it('round-trips every kind of JSON value exactly', async () => {
      const body = {
        string: 'héllo ☃ 😀 "quoted" \\ \n',
        int: 42,
        float: -0.125,
        big: 9007199254740991,
        yes: true,
        no: false,
        nothing: null,
        list: [1, 'two', [3], { four: 4 }],
        nested: { a: { b: { c: [] } }, empty: {} },
      };
      await call('PUT', RW, { body });
      expect(await read()).toEqual(body);
    });

    it('keeps keys that are also JavaScript object internals (__proto__, constructor, prototype)', async () => {
      const raw = '{"__proto__":{"polluted":true},"constructor":"c","prototype":1,"toString":2}';
      const r = await call('PUT', RW, { raw, headers: { 'content-type': 'application/json' } });
      await expectStatus(r, 204);
      const got = await call('GET', RW);
      expect(got.text).toBe(
        '{"result":{"__proto__":{"polluted":true},"constructor":"c","prototype":1,"toString":2}}',
      );
      expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    });

    it('reads only the attributes named in ?attributes=, skipping names that do not exist', async () => {
      await call('PUT', RW, { body: { a: 1, b: 2, c: 3 } });
      expect((await call('GET', `${RW}?attributes=a,c,zz`)).json).toEqual({ result: { a: 1, c: 3 } });
      expect((await call('GET', `${RW}?attributes=b&attributes=c`)).json).toEqual({ result: { b: 2, c: 3 } });
      expect((await call('GET', `${RW}?attributes=`)).json).toEqual({ result: { a: 1, b: 2, c: 3 } });
    });

    it('answers 400 for an empty name in ?attributes= and for a name over 70 bytes', async () => {
      const empty = await call('GET', `${RW}?attributes=a,,b`);
      await expectStatus(empty, 400);
      expect(empty.json.errors[0].message).toContain('must not list an empty name');
      const long = await call('GET', `${RW}?attributes=${'k'.repeat(71)}`);
      await expectStatus(long, 400);
      expect(long.json.errors[0].message).toContain('the limit is 70 bytes');
    });

    it('deletes the named attributes, and every attribute when the query names none', async () => {
      await call('PUT', RW, { body: { a: 1, b: 2, c: 3 } });
      await expectStatus(await call('DELETE', `${RW}?attributes=a,c,never`), 204);
      expect(await read()).toEqual({ b: 2 });
      await call('PUT', RW, { body: { a: 1 } });
      await expectStatus(await call('DELETE', RW), 204);
      expect(await read()).toEqual({});
    });

    it('answers 404 for a bucket that does not exist, on every operation, with nothing written', async () => {
      for (const [method, opts] of [
        ['PUT', { body: { a: 1 } }],
        ['PATCH', { body: { a: 1 } }],
        ['GET', {}],
        ['DELETE', {}],
      ] as const) {
        const r = await call(method, '/organizations/attributes/no_such_bucket', opts);
        await expectStatus(r, 404);
        expect(r.json).toEqual({
          errors: [{ httpcode: 404, message: 'no attribute bucket "no_such_bucket" in this organization' }],
        });
      }
      const rows = await t.service.ctx.storage.query(
        sql`select 1 from attribute_buckets where name = 'no_such_bucket'`,
      );
      expect(rows).toEqual([]);
    });

    it('keeps every organization to its own attributes in the same standard bucket', async () => {
      const other = await anotherOrganization();
      await call('PUT', RW, { body: { mine: 1 } });
      await call('PUT', RW, { ...other.as, body: { theirs: 2 } });
      expect(await read()).toEqual({ mine: 1 });
      expect((await call('GET', RW, other.as)).json.result).toEqual({ theirs: 2 });
    });
  });

  describe(`attribute buckets on ${label}: several buckets at once`, () => {
    const ALL = '/organizations/attributes';

    it('replaces each bucket named and leaves the others alone', async () => {
      await call('PUT', '/organizations/attributes/end_user_no_access', { body: { keep: true } });
      await call('PUT', RW, { body: { old: 1 } });
      const r = await call('PUT', ALL, {
        body: { end_user_read_write: { a: 1 }, 'person_pool-end_user_read_write': { b: 2 } },
      });
      await expectStatus(r, 204);
      const got = await call(
        'GET',
        `${ALL}?buckets=end_user_read_write,person_pool-end_user_read_write,end_user_no_access`,
      );
      expect(got.json).toEqual({
        result: {
          end_user_read_write: { a: 1 },
          'person_pool-end_user_read_write': { b: 2 },
          end_user_no_access: { keep: true },
        },
      });
    });

    it('merges into each bucket named on PATCH', async () => {
      await call('PUT', ALL, { body: { end_user_read_write: { a: 1 }, end_user_read_only: { b: 2 } } });
      await call('PATCH', ALL, { body: { end_user_read_write: { c: 3 }, end_user_read_only: { b: 4 } } });
      expect(
        (await call('GET', `${ALL}?buckets=end_user_read_write,end_user_read_only`)).json.result,
      ).toEqual({
        end_user_read_write: { a: 1, c: 3 },
        end_user_read_only: { b: 4 },
      });
    });

    it('reads every bucket of the organization when none is named, empty ones included', async () => {
      const other = await anotherOrganization();
      await call('POST', '/organizations/attribute-buckets', { ...other.as, body: { name: 'their_own' } });
      await call('PUT', '/organizations/attributes/their_own', { ...other.as, body: { x: 1 } });
      const got = await call('GET', ALL, other.as);
      await expectStatus(got, 200);
      expect(Object.keys(got.json.result).sort()).toEqual(
        [
          'end_user_no_access',
          'end_user_read_only',
          'end_user_read_write',
          'person_pool-end_user_no_access',
          'person_pool-end_user_read_only',
          'person_pool-end_user_read_write',
          'plan',
          'their_own',
        ].sort(),
      );
      expect(got.json.result.their_own).toEqual({ x: 1 });
      expect(got.json.result.end_user_read_write).toEqual({});
    });

    it('answers 400 for an empty bucket name in ?buckets= and 404 for an unknown one', async () => {
      await expectStatus(await call('GET', `${ALL}?buckets=end_user_read_write,`), 400);
      const r = await call('GET', `${ALL}?buckets=end_user_read_write,nope`);
      await expectStatus(r, 404);
      expect(r.json.errors[0].message).toContain('"nope"');
    });

    it.each([
      ['an unknown bucket', { zzz_missing: { b: 1 } }, 404],
      ['a read-only bucket', { plan: { b: 1 } }, 403],
      ['an attribute over the limits', { end_user_no_access: { ['k'.repeat(71)]: 1 } }, 400],
      ['a bucket that is not an object', { end_user_no_access: [1, 2] }, 400],
    ])('writes nothing in any bucket when one names %s', async (_, bad, status) => {
      await call('PUT', RW, { body: { before: 1 } });
      for (const method of ['PUT', 'PATCH']) {
        const r = await call(method, ALL, { body: { end_user_read_write: { after: 2 }, ...bad } });
        await expectStatus(r, status);
        expect(await read()).toEqual({ before: 1 });
      }
    });

    it('rolls back buckets already written when a later one fails inside the transaction', async () => {
      // A custom bucket's existence is settled under its lock, after end_user_read_write (earlier in name
      // order) has been written in the same transaction.
      await call('PUT', RW, { body: { before: 1 } });
      const r = await call('PUT', ALL, { body: { end_user_read_write: { after: 2 }, zzz_custom_gone: {} } });
      await expectStatus(r, 404);
      expect(await read()).toEqual({ before: 1 });
      const full = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
      await call('PUT', '/organizations/attributes/person_pool-end_user_no_access', { body: { k0: 0 } });
      const over = await call('PATCH', ALL, {
        body: { end_user_read_write: { after: 2 }, 'person_pool-end_user_no_access': full },
      });
      await expectStatus(over, 400);
      expect(await read()).toEqual({ before: 1 });
    });

    it('answers 400 for a body that is not an object of buckets', async () => {
      for (const raw of ['[]', '"text"', '42', 'null']) {
        const r = await call('PUT', ALL, { raw, headers: { 'content-type': 'application/json' } });
        await expectStatus(r, 400);
        expect(r.json.errors[0].message).toContain('body must be a JSON object of buckets');
      }
    });
  });

  describe(`attribute buckets on ${label}: the buckets`, () => {
    const BUCKETS = '/organizations/attribute-buckets';

    it('lists the standard buckets, the declared ones and then the custom ones', async () => {
      const other = await anotherOrganization();
      await call('POST', BUCKETS, {
        ...other.as,
        body: { name: 'billing', end_user_permissions: 'read_only' },
      });
      const r = await call('GET', BUCKETS, other.as);
      await expectStatus(r, 200);
      const byName = Object.fromEntries(r.json.result.map((b: { name: string }) => [b.name, b]));
      expect(Object.keys(byName)).toEqual([
        'end_user_no_access',
        'end_user_read_only',
        'end_user_read_write',
        'person_pool-end_user_no_access',
        'person_pool-end_user_read_only',
        'person_pool-end_user_read_write',
        'plan',
        'billing',
      ]);
      expect(byName.end_user_read_write).toEqual({
        name: 'end_user_read_write',
        sharing_scope: 'organization',
        owner_organization_id: other.id,
        end_user_permissions: 'read_write',
        organization_permissions: 'read_write',
        standard: true,
      });
      expect(byName['person_pool-end_user_no_access'].sharing_scope).toBe('person_pool');
      expect(byName.plan.organization_permissions).toBe('read_only');
      expect(byName.billing).toEqual({
        name: 'billing',
        sharing_scope: 'organization',
        owner_organization_id: other.id,
        end_user_permissions: 'read_only',
        organization_permissions: 'read_write',
        standard: false,
      });
    });

    it('creates a custom bucket that is written and read like a standard one, then deletes it', async () => {
      const created = await call('POST', BUCKETS, { body: { name: 'flags' } });
      await expectStatus(created, 201);
      expect(created.json.result).toMatchObject({
        name: 'flags',
        end_user_permissions: 'no_access',
        standard: false,
      });
      await call('PUT', '/organizations/attributes/flags', { body: { beta: true } });
      expect(await read('/organizations/attributes/flags')).toEqual({ beta: true });
      await expectStatus(await call('DELETE', `${BUCKETS}/flags`), 204);
      await expectStatus(await call('GET', '/organizations/attributes/flags'), 404);
      // Created again, it starts empty: the attributes went with the bucket.
      await call('POST', BUCKETS, { body: { name: 'flags' } });
      expect(await read('/organizations/attributes/flags')).toEqual({});
      await call('DELETE', `${BUCKETS}/flags`);
    });

    it('answers 409 for a name that exists, standard or custom', async () => {
      await call('POST', BUCKETS, { body: { name: 'twice' } });
      const again = await call('POST', BUCKETS, { body: { name: 'twice' } });
      await expectStatus(again, 409);
      expect(again.json.errors[0].message).toBe('bucket twice exists already in this organization');
      await expectStatus(await call('POST', BUCKETS, { body: { name: 'end_user_read_write' } }), 409);
      await call('DELETE', `${BUCKETS}/twice`);
    });

    it.each([
      ['', 'a bucket name is 1 to 64 characters'],
      ['Upper', 'a bucket name is 1 to 64 characters'],
      ['has space', 'a bucket name is 1 to 64 characters'],
      ['x'.repeat(65), 'a bucket name is 1 to 64 characters'],
      ['person_pool-mine', 'reserved'],
    ])('answers 400 for the bucket name %p', async (name, message) => {
      const r = await call('POST', BUCKETS, { body: { name } });
      await expectStatus(r, 400);
      expect(r.json.errors[0].message).toContain(message);
    });

    it('answers 400 for unknown end-user permissions', async () => {
      const r = await call('POST', BUCKETS, { body: { name: 'perm', end_user_permissions: 'everything' } });
      await expectStatus(r, 400);
      expect(r.json.errors[0].message).toContain('body.end_user_permissions');
    });

    it('refuses a member or a query parameter the bucket routes do not take, naming it', async () => {
      const made = await call('POST', BUCKETS, { body: { name: 'c3', zzz: 1 } });
      await expectStatus(made, 400);
      expect(made.json.errors[0].message).toBe(
        'body.zzz: is not a member of this body (accepted: name, end_user_permissions, sharing_scope)',
      );
      const listed = await call('GET', BUCKETS);
      expect(listed.json.result.map((b: { name: string }) => b.name)).not.toContain('c3');
      for (const [method, path] of [
        ['GET', `${BUCKETS}?foo=1`],
        ['POST', `${BUCKETS}?foo=1`],
        ['DELETE', `${BUCKETS}/nothing?foo=1`],
      ] as const) {
        const r = await call(method, path, method === 'POST' ? { body: { name: 'c4' } } : {});
        await expectStatus(r, 400);
        expect(r.json.errors[0].message).toBe(
          'query.foo: is not a parameter of this operation (it takes none)',
        );
      }
    });

    it('refuses to delete a standard bucket (403) and an unknown one (404)', async () => {
      const standard = await call('DELETE', `${BUCKETS}/end_user_read_write`);
      await expectStatus(standard, 403);
      expect(standard.json.errors[0].message).toContain('is a standard bucket');
      await expectStatus(await call('DELETE', `${BUCKETS}/never_made`), 404);
      const array = await call('POST', BUCKETS, { body: [] });
      await expectStatus(array, 400);
      expect(array.json.errors[0].message).toBe('body: must be a JSON object, not an array');
      // A name no bucket can have is not looked up (the database refuses a NUL).
      for (const bad of ['x%00', 'a%20b', `${'x'.repeat(300)}`])
        expect({ bad, status: (await call('DELETE', `${BUCKETS}/${bad}`)).status }).toEqual({
          bad,
          status: 404,
        });
    });

    it('refuses a body of many bad keys quickly, listing ten and counting the rest', async () => {
      const raw = `{${Array.from({ length: 30_000 }, (_, i) => `"${i}":1e999`).join(',')}}`;
      const started = performance.now();
      const r = await call('PUT', '/organizations/attributes/end_user_read_write', {
        raw,
        headers: { 'content-type': 'application/json' },
      });
      await expectStatus(r, 400);
      expect(r.json.errors[0].message).toEndWith('; and 29990 more problems');
      expect(performance.now() - started).toBeLessThan(3000);
    });

    it('caps the custom buckets of an organization, naming the limit', async () => {
      const other = await anotherOrganization();
      for (const name of ['one', 'two', 'three'])
        await expectStatus(await call('POST', BUCKETS, { ...other.as, body: { name } }), 201);
      const r = await call('POST', BUCKETS, { ...other.as, body: { name: 'four' } });
      await expectStatus(r, 400);
      expect(r.json.errors[0].message).toBe('this organization has 3 custom buckets; the limit is 3');
    });

    it("answers 403, never data, for another organization's custom bucket", async () => {
      const owner = await anotherOrganization('Owner');
      await call('POST', BUCKETS, { ...owner.as, body: { name: 'secret_stuff' } });
      await call('PUT', '/organizations/attributes/secret_stuff', { ...owner.as, body: { s: 'hidden' } });
      for (const [method, path, opts] of [
        ['GET', '/organizations/attributes/secret_stuff', {}],
        ['PUT', '/organizations/attributes/secret_stuff', { body: { s: 'mine' } }],
        ['PATCH', '/organizations/attributes/secret_stuff', { body: { s: 'mine' } }],
        ['DELETE', '/organizations/attributes/secret_stuff', {}],
        ['GET', '/organizations/attributes?buckets=secret_stuff', {}],
        ['PUT', '/organizations/attributes', { body: { secret_stuff: {} } }],
        ['DELETE', `${BUCKETS}/secret_stuff`, {}],
      ] as const) {
        const r = await call(method, path, opts);
        expect([method, path, r.status]).toEqual([method, path, 403]);
        expect(r.json.errors[0].message).toContain('belongs to another organization');
        expect(r.text).not.toContain('hidden');
      }
      const list = await call('GET', BUCKETS);
      expect(list.json.result.map((b: { name: string }) => b.name)).not.toContain('secret_stuff');
      expect((await call('GET', '/organizations/attributes/secret_stuff', owner.as)).json.result).toEqual({
        s: 'hidden',
      });
    });
  });

  describe(`attribute buckets on ${label}: a read-only bucket`, () => {
    const PLAN = '/organizations/attributes/plan';

    it('answers 403 to every write of the API key, single or multi-bucket, and writes nothing', async () => {
      for (const [method, path, opts] of [
        ['PUT', PLAN, { body: { tier: 'free' } }],
        ['PATCH', PLAN, { body: { tier: 'free' } }],
        ['DELETE', PLAN, {}],
        ['PUT', '/organizations/attributes', { body: { plan: { tier: 'free' } } }],
        ['PATCH', '/organizations/attributes', { body: { plan: { tier: 'free' } } }],
        ['DELETE', '/organizations/attribute-buckets/plan', {}],
      ] as const) {
        const r = await call(method, path, opts);
        await expectStatus(r, 403);
      }
      expect((await call('PUT', PLAN, { body: {} })).json.errors[0].message).toBe(
        'attribute bucket "plan" is read-only for this organization: it may be read, not written',
      );
      expect(await read(PLAN)).toEqual({});
    });

    it('is written by the deployment through the attributeStore capability and read by the organization', async () => {
      const { attributeStore } = await import('../../plugins/attributes/index.ts');
      const store = t.service.ctx.capability(attributeStore)!;
      await store.write(t.org.id, 'plan', { tier: 'enterprise', seats: 25 });
      await store.write(t.org.id, 'plan', { seats: 30 }, 'merge');
      expect(await read(PLAN)).toEqual({ tier: 'enterprise', seats: 30 });
      expect(await store.read(t.org.id, 'plan', ['seats'])).toEqual({ seats: 30 });
      await store.write(t.org.id, 'plan', {});
    });
  });

  attributesLimits(label, () => t);
  attributesQuery(label, () => t);
  attributesValues(label, () => t);
  attributesConcurrency(label, o, () => t);
}
