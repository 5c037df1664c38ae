import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as v from 'valibot';
import { eventDefinition } from '../../../core/events/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startWebhookService, type WebhookTestService } from '../../helpers/webhooks.ts';

let t: WebhookTestService;
beforeAll(async () => {
  t = await startWebhookService({ options: { jwksRateLimit: { burst: 5, perMinute: 30 } } });
});
afterAll(async () => {
  await t.stop();
});

const JWKS = '/organizations/webhooks/verification-jwks';

describe('the verification key set', () => {
  it('answers the bare JWKS with Service-OrgID only, cacheable with a strong ETag', async () => {
    const other = await t.service.ctx.orgs.create('Keys');
    const r = await t.call('GET', JWKS, { key: null, orgId: other.organization.id });
    await expectStatus(r, 200);
    expect(r.json.keys).toHaveLength(1);
    expect(r.json.keys[0]).toEqual({
      kty: 'EC',
      crv: 'P-256',
      alg: 'ES256',
      use: 'sig',
      key_ops: ['verify'],
      kid: expect.any(String),
      x: expect.any(String),
      y: expect.any(String),
    });
    expect(r.json).not.toHaveProperty('result');
    expect(r.headers.get('cache-control')).toBe('public, max-age=300');
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await t.call('GET', JWKS, {
      key: null,
      orgId: other.organization.id,
      headers: { 'If-None-Match': etag },
    });
    await expectStatus(again, 304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    // A rotation changes the key set, and so the ETag; the previous key stays published.
    await t.service.ctx.signer.rotate(other.organization.id);
    const rotated = await t.call('GET', JWKS, {
      key: null,
      orgId: other.organization.id,
      headers: { 'If-None-Match': etag },
    });
    await expectStatus(rotated, 200);
    expect(rotated.json.keys).toHaveLength(2);
    expect(rotated.headers.get('etag')).not.toBe(etag);
  });

  it('varies on the organization header, on 200 and on 304, under the deployment prefix', async () => {
    const r = await t.call('GET', JWKS, { key: null });
    expect(r.headers.get('vary')).toBe('Service-OrgID');
    const again = await t.call('GET', JWKS, {
      key: null,
      headers: { 'If-None-Match': r.headers.get('etag')! },
    });
    await expectStatus(again, 304);
    expect(again.headers.get('vary')).toBe('Service-OrgID');
    const acme = await startWebhookService({ env: { HEADER_PREFIX: 'Acme' } });
    try {
      const theirs = await acme.call('GET', JWKS, { key: null });
      await expectStatus(theirs, 200);
      expect(theirs.headers.get('vary')).toBe('Acme-OrgID');
    } finally {
      await acme.stop();
    }
  });

  it('answers 404 for an unknown organization and 400 without the header', async () => {
    expect(
      (await t.call('GET', JWKS, { key: null, orgId: '01900000-0000-7000-8000-000000000000' })).status,
    ).toBe(404);
    await expectStatus(await t.call('GET', JWKS, { key: null, orgId: null }), 400);
  });

  it('is rate-limited per organization, with 429 and Retry-After', async () => {
    const limited = await t.service.ctx.orgs.create('Limited');
    const orgId = limited.organization.id;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await t.call('GET', JWKS, { key: null, orgId })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const r = await t.call('GET', JWKS, { key: null, orgId });
    await expectStatus(r, 429);
    expect(r.headers.get('retry-after')).toBe('2');
    expect(r.json.errors[0]).toEqual({
      httpcode: 429,
      message: expect.stringContaining('30 requests a minute'),
    });
    // Another organization has a bucket of its own.
    await expectStatus(await t.call('GET', JWKS, { key: null }), 200);
  });
});

describe('test events', () => {
  it('answers 408 past the consistency timeout while the publish waits for the database', async () => {
    const { organization, apiKey } = await t.service.ctx.orgs.create('Slow');
    const as = { orgId: organization.id, key: apiKey };
    await expectStatus(await t.call('GET', '/organizations', as), 200); // the key is cached
    let release = () => {};
    const held = t.service.ctx.storage.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    const r = await t.call('POST', '/test-events', {
      ...as,
      body: [{ event_name: 'RoleCreated_v1' }],
      headers: { 'Service-Required-Consistency-Timeout': '1' },
    });
    release();
    await held;
    await expectStatus(r, 408);
    expect(r.json.errors[0].message).toContain('may still be applied');
  });

  it('answers 201 with events built from the catalogue samples, is_test_event true', async () => {
    const correlation = crypto.randomUUID();
    const r = await t.call('POST', '/test-events', {
      body: [
        { event_name: 'PersonCreated_v1', count: 2, analytics_correlation_id: correlation },
        { event_name: 'MitmAttackDetectedV1' },
        { event_name: 'AWSIAMRoleCreated_v1' },
      ],
    });
    await expectStatus(r, 201);
    const events = r.json.result;
    expect(events).toHaveLength(4);
    for (const e of events) {
      const m = e.event_metadata;
      // The reference's BaseTestEvent members at the top, as the metadata has them.
      expect([e.event_id, e.event_name, e.timestamp, e.organization_id]).toEqual([
        m.event_id,
        m.event_name,
        m.timestamp,
        t.org.id,
      ]);
      expect(m.is_test_event).toBe(true);
      expect(m.organization_id).toBe(t.org.id);
      expect(m.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
      const {
        event_metadata: _,
        event_id: _i,
        event_name: _n,
        timestamp: _t,
        organization_id: _o,
        ...members
      } = e;
      expect(v.safeParse(eventDefinition(m.event_name)!.schema, members).success).toBe(true);
    }
    expect(
      events.map((e: { event_metadata: { event_name: string } }) => e.event_metadata.event_name),
    ).toEqual(['PersonCreated_v1', 'PersonCreated_v1', 'MitmAttackDetected_v1', 'AWSIAMRoleCreated_v1']);
    expect(events[0].analytics_metadata.analytics_correlation_id).toBe(correlation);
    expect(events[0].event_metadata.event_id).not.toBe(events[1].event_metadata.event_id);
  });

  it('lists a duplicated event twice, with one event_id', async () => {
    const r = await t.call('POST', '/test-events', {
      body: [{ event_name: 'RoleCreated_v1', duplicates: true }],
    });
    await expectStatus(r, 201);
    expect(r.json.result).toHaveLength(2);
    expect(r.json.result[0]).toEqual(r.json.result[1]);
  });

  it('answers 400 with clear messages for unknown events and out-of-bounds requests', async () => {
    const cases: Array<[unknown, string]> = [
      [
        [{ event_name: 'Nope_v1' }],
        'body[0].event_name: "Nope_v1" is not an event of the catalogue; known: AuthenticationSucceeded_v1',
      ],
      // Only the spec's alias of the MITM event; other <type>V<n> spellings name nothing.
      [
        [{ event_name: 'PersonCreatedV1' }],
        'body[0].event_name: "PersonCreatedV1" is not an event of the catalogue; known: AuthenticationSucceeded_v1',
      ],
      [[{ event_name: 'RoleCreatedV1' }], 'also MitmAttackDetectedV1 (MitmAttackDetected_v1)'],
      [[], 'body: must list at least one event'],
      [
        Array.from({ length: 51 }, () => ({ event_name: 'RoleCreated_v1' })),
        'body: must list at most 50 entries',
      ],
      [[{ event_name: 'RoleCreated_v1', count: 51 }], 'body[0].count: must be at most 50'],
      [[{ event_name: 'RoleCreated_v1', count: 0 }], 'body[0].count: must be at least 1'],
      [[{ event_name: 'RoleCreated_v1', count: 1.5 }], 'body[0].count: must be an integer'],
      [
        Array.from({ length: 6 }, () => ({ event_name: 'RoleCreated_v1', count: 5, duplicates: true })),
        'asks for 60 events (count, twice with duplicates); at most 50 per request',
      ],
      [
        [{ event_name: 'RoleCreated_v1', analytics_correlation_id: 'abc' }],
        'body[0].analytics_correlation_id: must be a UUID',
      ],
      [{ event_name: 'RoleCreated_v1' }, 'body: must be an array of test event descriptions'],
      [Array.from({ length: 12 }, () => 0), 'body[9]: must be a JSON object (got 0); and 2 more'],
    ];
    for (const [body, expected] of cases) {
      const r = await t.call('POST', '/test-events', { body });
      await expectStatus(r, 400);
      expect(r.json.errors[0].message).toContain(expected);
    }
  });

  it('refuses a long array of bad entries at once, with one short message', async () => {
    const started = performance.now();
    // Without a key it is a 401 before the body is looked at.
    const anonymous = await t.call('POST', '/test-events', {
      body: Array.from({ length: 20_000 }, () => 0),
      key: null,
    });
    await expectStatus(anonymous, 401);
    const authed = await t.call('POST', '/test-events', { body: Array.from({ length: 20_000 }, () => 0) });
    await expectStatus(authed, 400);
    expect(authed.json.errors[0].message).toBe('body: must list at most 50 entries (got 20000)');
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('the test-events rate limit', () => {
  it('counts events, 10 a minute with bursts of 50 per organization, with 429 and Retry-After', async () => {
    const { organization, apiKey } = await t.service.ctx.orgs.create('Tester');
    const publish = (body: unknown) =>
      t.call('POST', '/test-events', { orgId: organization.id, key: apiKey, body });
    // A refused request takes nothing.
    await expectStatus(await publish([{ event_name: 'Nope_v1', count: 50 }]), 400);
    await expectStatus(await publish([{ event_name: 'RoleCreated_v1', count: 30 }]), 201);
    await expectStatus(await publish([{ event_name: 'RoleCreated_v1', count: 10, duplicates: true }]), 201);
    const limited = await publish([{ event_name: 'RoleCreated_v1' }]);
    await expectStatus(limited, 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(5);
    expect(limited.json.errors[0]).toEqual({
      httpcode: 429,
      message: expect.stringContaining('limited to 10 events a minute (bursts of 50)'),
    });
    // Another organization has a bucket of its own.
    await expectStatus(
      await t.call('POST', '/test-events', { body: [{ event_name: 'RoleCreated_v1' }] }),
      201,
    );
  });

  it('refuses with 400 a request above the burst, which could never pass', async () => {
    const r = await t.call('POST', '/test-events', {
      body: [{ event_name: 'RoleCreated_v1', count: 26, duplicates: true }],
    });
    await expectStatus(r, 400);
    expect(r.json.errors[0].message).toContain(
      'asks for 52 events (count, twice with duplicates); at most 50 per request',
    );
  });
});
