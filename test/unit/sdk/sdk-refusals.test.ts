import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallResult } from '../../helpers/service.ts';
import { APP, type SdkService, sdkService } from './fixture.ts';

let s: SdkService;
beforeAll(async () => {
  s = await sdkService();
});
afterAll(() => s.stop());

const LOADED = { event_name: 'ServiceSDKLoaded_v1' };

/** Asserts a refusal: its status, a message containing `says`, and that nothing was published. */
async function refused(res: CallResult, status: number, says: string) {
  await expectStatus(res, status);
  expect(res.json.errors[0].message).toContain(says);
}

describe('the SDK ingest refuses, publishing nothing', () => {
  let before = 0;
  beforeAll(async () => {
    before = (await s.published('ServiceSDKLoaded_v1', 0)).length;
  });
  afterAll(async () => {
    // Every refusal below carried ServiceSDKLoaded_v1 events beside the bad one: none went out.
    expect(await s.published('ServiceSDKLoaded_v1')).toHaveLength(before);
  });

  it('an event name the catalogue does not know, or none', async () => {
    await refused(
      await s.sdkEvents([LOADED, { event_name: 'PageViewed_v1' }]),
      400,
      'body[1].event_name: "PageViewed_v1" is not an event of the catalogue',
    );
    await refused(await s.sdkEvents([LOADED, { person_id: 'x' }]), 400, 'body[1].event_name: required');
    await refused(
      await s.sdkEvents([LOADED, { event_name: 7 }]),
      400,
      "body[1].event_name: must be the event's catalogue name, a non-empty string (got number)",
    );
  });

  it('an event of the catalogue that the SDK does not send, naming the ones it takes', async () => {
    const res = await s.sdkEvents([LOADED, { event_name: 'PersonCreated_v1' }]);
    await refused(res, 400, 'body[1].event_name: PersonCreated_v1 is not taken here');
    expect(res.json.errors[0].message).toContain(
      'the SDK ingest accepts ServiceSDKLoaded_v1, VirtualPageLoaded_v1, PersonIdentified_v1',
    );
    await refused(
      await s.sdkEvents([LOADED, { event_name: 'GateServerStarted_v1' }]),
      400,
      'GateServerStarted_v1 is not taken here',
    );
  });

  it('a cloud-provider event, saying that those are not subscribable', async () => {
    await refused(
      await s.sdkEvents([LOADED, { event_name: 'AWSIAMRoleCreated_v1' }]),
      400,
      'AWSIAMRoleCreated_v1 is a cloud-provider event; those are not subscribable',
    );
  });

  it('members the catalogue does not list, or of the wrong kind, naming each where it was sent', async () => {
    await refused(
      await s.sdkEvents([LOADED, { event_name: 'ServiceSDKLoaded_v1', colour: 'blue' }]),
      400,
      'body[1].colour: unknown member',
    );
    await refused(
      await s.sdkEvents([LOADED, { event_name: 'ServiceSDKLoaded_v1', browser_metadata: 'Firefox' }]),
      400,
      'body[1].browser_metadata: must be an object (got "Firefox")',
    );
    await refused(
      await s.sdkEvents([
        LOADED,
        { event_name: 'VirtualPageLoaded_v1', browser_metadata: { user_agent: 42, screen: '4k' } },
      ]),
      400,
      'body[1].browser_metadata.screen: unknown member',
    );
    await refused(
      await s.sdkEvents([
        LOADED,
        { event_name: 'ServiceSDKLoaded_v1', analytics_metadata: { analytics_correlation_id: 'abc' } },
      ]),
      400,
      'body[1].analytics_metadata.analytics_correlation_id: must be a UUID',
    );
    // ServiceSDKLoaded_v1 has no person: naming one is an unknown member, token or not.
    await refused(
      await s.sdkEvents([LOADED, { event_name: 'ServiceSDKLoaded_v1', person_id: crypto.randomUUID() }]),
      400,
      'body[1].person_id: unknown member',
    );
  });

  it('bodies that are not events: not JSON, empty, an empty list, a string, too many, too deep', async () => {
    await refused(await s.sdkEvents(undefined, { raw: '{"event_name":' }), 400, 'request body must be JSON');
    await refused(await s.sdkEvents(undefined, { raw: '' }), 400, 'request body is required');
    await refused(await s.sdkEvents([]), 400, 'body: must hold 1 to 50 events (got none)');
    await refused(await s.sdkEvents('ServiceSDKLoaded_v1'), 400, 'body: must be an event object');
    await refused(await s.sdkEvents([LOADED, 3]), 400, 'body[1]: must be an event object');
    await refused(
      await s.sdkEvents(Array.from({ length: 51 }, () => LOADED)),
      400,
      'body: must hold 1 to 50 events (got 51)',
    );
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    await refused(
      await s.sdkEvents([LOADED, { event_name: 'ServiceSDKLoaded_v1', x: deep }]),
      400,
      'deeper than 64 levels',
    );
  });

  it('a body over 64 KiB with 413, whether its length is declared or it is streamed', async () => {
    const big = JSON.stringify([LOADED, { ...LOADED, browser_metadata: { user_agent: 'x'.repeat(70_000) } }]);
    await refused(
      await s.sdkEvents(undefined, { raw: big, headers: { 'content-type': 'application/json' } }),
      413,
      'larger than the limit of 65536 bytes',
    );
    const streamed = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const res = await s.service.fetch(
      new Request('http://localhost/sdk/events', {
        method: 'POST',
        headers: { [s.names.orgId]: s.org.id },
        body: streamed,
        duplex: 'half',
      } as RequestInit),
    );
    await refused(
      { status: res.status, headers: res.headers, text: '', json: await res.json() },
      413,
      '65536',
    );
  });

  it('a browser Origin the organization does not list, with 403 and no CORS grant', async () => {
    for (const origin of ['https://evil.example', 'null', `${APP}:8443`, 'http://app.example.com']) {
      const res = await s.sdkEvents(LOADED, { headers: { origin } });
      await refused(res, 403, "is not one of this organization's allowed origins");
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  it('an event that names a person without the token, or another person than the token', async () => {
    const ann = await s.personWithToken({}, 'europe-belgium');
    const bob = await s.personWithToken();
    const bearer = { authorization: `Bearer ${ann.token}` };
    const noToken = await s.sdkEvents([
      LOADED,
      { event_name: 'PersonIdentified_v1', person_id: ann.personId },
    ]);
    await refused(noToken, 401, "body[1]: PersonIdentified_v1 needs the person's token");
    expect(noToken.headers.get('www-authenticate')).toBe('Bearer');
    await refused(
      await s.sdkEvents([LOADED, { event_name: 'VirtualPageLoaded_v1', person_id: ann.personId }]),
      401,
      "body[1].person_id: names a person, which needs the person's token",
    );
    await refused(
      await s.sdkEvents([LOADED, { event_name: 'PersonIdentified_v1', person_id: bob.personId }], {
        headers: bearer,
      }),
      403,
      `body[1].person_id: must be the person of the bearer token (${ann.personId})`,
    );
    await refused(
      await s.sdkEvents([LOADED, { event_name: 'VirtualPageLoaded_v1', region: 'us-iowa' }], {
        headers: bearer,
      }),
      400,
      "body[1].region: must be the region of the token's person (europe-belgium)",
    );
  });

  it('the token of a person deactivated since, until the person is active again', async () => {
    const ann = await s.personWithToken();
    const bearer = { authorization: `Bearer ${ann.token}` };
    const identified = [LOADED, { event_name: 'PersonIdentified_v1', person_id: ann.personId }];
    await expectStatus(await s.call('PATCH', `/persons/${ann.personId}`, { body: { active: false } }), 200);
    const res = await s.sdkEvents(identified, { headers: bearer });
    await refused(res, 401, '(person_inactive)');
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    await expectStatus(await s.call('PATCH', `/persons/${ann.personId}`, { body: { active: true } }), 200);
    // Accepted again (without the ServiceSDKLoaded_v1 this block counts as never published).
    await expectStatus(await s.sdkEvents(identified.slice(1), { headers: bearer }), 202);
  });

  it('a bearer token that is not a valid person token of the organization', async () => {
    const cases: Array<[string, string]> = [
      ['Basic dXNlcjpwdw==', 'header Authorization must be "Bearer <identity token>"'],
      ['Bearer not.a.jwt', '(malformed)'],
      ['Bearer', 'header Authorization must be "Bearer <identity token>"'],
    ];
    for (const [authorization, says] of cases) {
      const res = await s.sdkEvents(LOADED, { headers: { authorization } });
      await refused(res, 401, says);
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    }
  });
});

describe('the SDK ingest', () => {
  it('grants CORS to an allowed origin on its answers, refusals included', async () => {
    const ok = await s.sdkEvents(LOADED, { headers: { origin: APP } });
    await expectStatus(ok, 202);
    expect(ok.headers.get('access-control-allow-origin')).toBe(APP);
    expect(ok.headers.get('vary')).toBe('Origin');
    const bad = await s.sdkEvents({ event_name: 'Nope_v1' }, { headers: { origin: APP } });
    await expectStatus(bad, 400);
    expect(bad.headers.get('access-control-allow-origin')).toBe(APP);
    expect(bad.headers.get('access-control-expose-headers')).toContain('retry-after');
  });

  it('accepts a request without Origin (not a browser), and a text/plain beacon body', async () => {
    await expectStatus(await s.sdkEvents(LOADED), 202);
    const beacon = await s.sdkEvents(undefined, {
      raw: JSON.stringify(LOADED),
      headers: { 'content-type': 'text/plain;charset=UTF-8', origin: APP },
    });
    await expectStatus(beacon, 202);
  });

  it('answers the preflight of an allowed origin, and refuses one no organization lists', async () => {
    const preflight = (origin: string, method = 'POST') =>
      s.call('OPTIONS', '/sdk/events', {
        key: null,
        orgId: null,
        headers: {
          origin,
          'access-control-request-method': method,
          'access-control-request-headers': 'content-type, service-orgid, authorization',
        },
      });
    const granted = await preflight(APP);
    await expectStatus(granted, 204);
    expect(granted.headers.get('access-control-allow-origin')).toBe(APP);
    expect(granted.headers.get('access-control-allow-methods')).toBe('POST');
    expect(granted.headers.get('access-control-allow-headers')).toContain('service-orgid');
    expect(granted.headers.get('access-control-allow-headers')).toContain('authorization');
    // The SDK version under both names: this service's and the reference's.
    expect(granted.headers.get('access-control-allow-headers')).toContain('service-sdk-version');
    expect(granted.headers.get('access-control-allow-headers')).toContain('service-sdkversion');
    expect(granted.headers.get('access-control-max-age')).toBe('600');
    const denied = await preflight('https://evil.example');
    await refused(denied, 403, 'not an allowed origin of any organization');
    expect(denied.headers.get('access-control-allow-origin')).toBeNull();
    await refused(await preflight(APP, 'DELETE'), 403, 'takes POST only');
    const logout = await s.call('OPTIONS', '/logout', {
      key: null,
      orgId: null,
      headers: { origin: APP, 'access-control-request-method': 'POST' },
    });
    await expectStatus(logout, 204);
    const plain = await s.call('OPTIONS', '/sdk/events', { key: null, orgId: null });
    await expectStatus(plain, 204);
    expect(plain.headers.get('allow')).toBe('OPTIONS, POST');
  });

  it('limits events per client address with 429 and Retry-After, and each address has its own budget', async () => {
    const limited = await sdkService({ env: { SDK_RATE_LIMIT: '60/100' } });
    try {
      const batch = Array.from({ length: 50 }, () => LOADED);
      await expectStatus(await limited.sdkEvents(batch, { peer: '192.0.2.50' }), 202);
      await expectStatus(await limited.sdkEvents(batch, { peer: '192.0.2.50' }), 202);
      const past = await limited.sdkEvents([LOADED], { peer: '192.0.2.50', headers: { origin: APP } });
      await refused(past, 429, 'limited to 60 events a minute (bursts of 100)');
      expect(Number(past.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(past.headers.get('access-control-allow-origin')).toBe(APP);
      const { token } = await limited.personWithToken();
      await refused(
        await limited.call('POST', '/logout', {
          key: null,
          peer: '192.0.2.50',
          headers: { authorization: `Bearer ${token}` },
        }),
        429,
        'retry after',
      );
      await expectStatus(await limited.sdkEvents([LOADED], { peer: '192.0.2.51' }), 202);
    } finally {
      await limited.stop();
    }
  });

  it('publishes nothing of a batch when one event is refused, and all of it otherwise', async () => {
    const before = (await s.published('VirtualPageLoaded_v1', 0)).length;
    const page = { event_name: 'VirtualPageLoaded_v1' };
    await expectStatus(await s.sdkEvents([page, page, { ...page, oops: true }]), 400);
    const res = await s.sdkEvents([page, page, page]);
    await expectStatus(res, 202);
    const after = await s.published('VirtualPageLoaded_v1');
    expect(after.map((e) => e.event_metadata.event_id).slice(before)).toEqual(res.json.result.event_ids);
  });
});
