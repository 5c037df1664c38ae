import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { attributes } from '../../plugins/attributes/index.ts';
import { storedBytes } from '../../plugins/attributes/store/statements.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { attributesSuite, SUITE_OPTIONS } from './attributes.behaviour.ts';

attributesSuite('PGlite', {
  start: () => startTestService({ definition: { plugins: [attributes(SUITE_OPTIONS)] } }),
  // One connection: a transaction that awaits a timer holds the row lock and the connection with it.
  // (PGlite runs pg_sleep synchronously, which would block the event loop instead.)
  async holdBucketLock(t, orgId, bucket, ms) {
    let held: (rows: number) => void = () => {};
    const locked = new Promise<number>((r) => {
      held = r;
    });
    const released = t.service.ctx.storage.transaction(async (tx) => {
      const rows = await tx.query(
        sql`select 1 from attribute_buckets where org_id = ${orgId} and name = ${bucket} for update`,
      );
      held(rows.length);
      await new Promise((r) => setTimeout(r, ms));
    });
    expect(await locked).toBe(1);
    return { released };
  },
  readsDuringLock: false,
});

describe('the attributes plugin', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ definition: { plugins: [attributes()] } });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('has end_user_read_write and the other standard buckets for every organization, with no row per organization', async () => {
    const fresh = await t.service.ctx.orgs.create('Fresh');
    const as = { orgId: fresh.organization.id, key: fresh.apiKey };
    const list = await t.call('GET', '/organizations/attribute-buckets', as);
    expect(list.json.result.map((b: { name: string }) => b.name)).toEqual([
      'end_user_no_access',
      'end_user_read_only',
      'end_user_read_write',
      'person_pool-end_user_no_access',
      'person_pool-end_user_read_only',
      'person_pool-end_user_read_write',
    ]);
    for (const b of list.json.result) expect(b.organization_permissions).toBe('read_write');
    expect((await t.call('GET', '/organizations/attributes/end_user_read_write', as)).json).toEqual({
      result: {},
    });
    const rows = await t.service.ctx.storage.query(
      sql`select 1 from attribute_buckets where org_id = ${fresh.organization.id}`,
    );
    expect(rows).toEqual([]);
  });

  it('lets an organization write end_user_read_only, as the reference does in its own example', async () => {
    const r = await t.call('PUT', '/organizations/attributes', {
      body: { end_user_read_only: { address_line_1: 'New Street', city: 'New York' } },
    });
    await expectStatus(r, 204);
  });

  it('documents every route in the OpenAPI document with its operation name, tag and security', async () => {
    const doc = (await t.call('GET', '/openapi.json')).json;
    const ops = Object.fromEntries(
      Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
        ([path, item]) => Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op]),
      ),
    );
    const expected = {
      'PUT /organizations/attributes': 'PutOrganizationsAttributes',
      'PATCH /organizations/attributes': 'PatchOrganizationsAttributes',
      'GET /organizations/attributes': 'GetOrganizationsAttributes',
      'PUT /organizations/attributes/{bucket_name}': 'PutOrganizationsAttributesBucketName',
      'PATCH /organizations/attributes/{bucket_name}': 'PatchOrganizationsAttributesBucketName',
      'GET /organizations/attributes/{bucket_name}': 'GetOrganizationsAttributesBucketName',
      'DELETE /organizations/attributes/{bucket_name}': 'DeleteOrganizationsAttributesBucketName',
      'GET /organizations/attribute-buckets': 'GetOrganizationsAttributeBuckets',
      'POST /organizations/attribute-buckets': 'PostOrganizationsAttributeBuckets',
      'DELETE /organizations/attribute-buckets/{bucket_name}':
        'DeleteOrganizationsAttributeBucketsBucketName',
    };
    for (const [route, operationId] of Object.entries(expected)) {
      const op = ops[route] as unknown as {
        operationId: string;
        summary: string;
        tags: string[];
        security: unknown[];
        responses: Record<string, unknown>;
      };
      expect(op?.operationId).toBe(operationId);
      expect(op.summary.length).toBeGreaterThan(10);
      expect(op.tags).toEqual(['Organization Attributes']);
      expect(op.security).toEqual([{ orgId: [], apiKey: [] }]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '401', '403', '404']));
    }
    const put = doc.paths['/organizations/attributes/{bucket_name}'].put;
    expect(put.requestBody.content['application/json'].schema.type).toBe('object');
    expect(put.requestBody.description).toContain('1 to 70 bytes of UTF-8');
    expect(Object.keys(put.responses)).toEqual(['204', '400', '401', '403', '404', '408', '413']);
    expect(put.parameters.map((p: { name: string; in: string }) => `${p.in} ${p.name}`)).toEqual([
      'path bucket_name',
      'header Service-Required-Consistency',
      'header Service-Required-Consistency-Timeout',
    ]);
    const timeout = put.parameters.find((p: { name: string }) => p.name.endsWith('Timeout'));
    expect(timeout.schema).toEqual(expect.objectContaining({ type: 'integer', minimum: 1, maximum: 120 }));
    const get = doc.paths['/organizations/attributes/{bucket_name}'].get;
    expect(get.parameters.map((p: { name: string }) => p.name)).toEqual(['bucket_name', 'attributes']);
  });

  it('checks its options when the deployment is defined', () => {
    expect(() => attributes({ buckets: [{ name: 'end_user_read_write' }] })).toThrow('is a standard bucket');
    expect(() => attributes({ buckets: [{ name: 'Bad Name' }] })).toThrow('breaks the name rule');
    expect(() => attributes({ maxAttributesPerBucket: 0 })).toThrow(
      'maxAttributesPerBucket must be an integer',
    );
    expect(() => attributes({ maxBucketBytes: 1023 })).toThrow(
      'maxBucketBytes must be an integer from 1024 to 251658240 (got 1023)',
    );
    expect(() => attributes({ maxBucketBytes: 240 * 1024 * 1024 + 1 })).toThrow('maxBucketBytes must be');
  });
});

describe('the size of a bucket (maxBucketBytes)', () => {
  let t: TestService;
  const RW = '/organizations/attributes/end_user_read_write';
  const stored = async () => {
    const [row] = await t.service.ctx.storage.query<{ bytes: number; attributes: string }>(
      sql`select octet_length(attributes::text)::int as bytes, attributes::text as attributes
        from attribute_buckets where org_id = ${t.org.id} and name = 'end_user_read_write'`,
    );
    return row!;
  };
  beforeAll(async () => {
    t = await startTestService({ definition: { plugins: [attributes({ maxBucketBytes: 2048 })] } });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('counts a bucket as Postgres stores it, names escaped, and refuses a write past it with nothing written', async () => {
    // Names that JSON escapes (a quote, a backslash, a tab, a control character) or writes as UTF-8.
    const names = ['plain', 'quo"te', 'back\\slash', 'tab\there', 'bell\u0007', 'é€😀', '\u2028'];
    const body = Object.fromEntries(names.map((n, i) => [n, 'v'.repeat(10 * i)]));
    await expectStatus(await t.call('PUT', RW, { body }), 204);
    const before = await stored();
    // The sealed values as stored, measured by the same rule the service applies before a write.
    const sealed: Record<string, string> = JSON.parse(before.attributes);
    const prepared = Object.keys(sealed).map((key) => ({ key, json: '' }));
    expect(storedBytes(prepared, Object.values(sealed))).toBe(before.bytes);

    // A PUT past the limit: 400, and the bucket as it was.
    const big = { a: 'x'.repeat(900), b: 'y'.repeat(900) };
    const refused = await t.call('PUT', RW, { body: big });
    await expectStatus(refused, 400);
    expect(refused.json.errors[0].message).toMatch(
      /^bucket end_user_read_write would hold \d+ bytes of sealed attributes; the limit is 2048 bytes a bucket$/,
    );
    expect(await stored()).toEqual(before);
    // A PATCH that takes the bucket past it: refused too, after seeing what the bucket holds.
    const patched = await t.call('PATCH', RW, { body: { more: 'z'.repeat(1000) } });
    await expectStatus(patched, 400);
    expect(patched.json.errors[0].message).toContain('the limit is 2048 bytes a bucket');
    expect(await stored()).toEqual(before);
    // Under the limit both go through.
    await expectStatus(await t.call('PATCH', RW, { body: { more: 'z'.repeat(100) } }), 204);
    expect((await t.call('GET', `${RW}?attributes=more`)).json.result).toEqual({ more: 'z'.repeat(100) });
    await expectStatus(await t.call('PUT', RW, { body: { a: 'x'.repeat(900) } }), 204);
    expect(Object.keys((await t.call('GET', RW)).json.result)).toEqual(['a']);
  });
});
