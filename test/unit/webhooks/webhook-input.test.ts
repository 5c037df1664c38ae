import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createWebhookStore } from '../../../plugins/webhooks/store/webhooks.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { startWebhookService, until, type WebhookTestService } from '../../helpers/webhooks.ts';

const MAX_WEBHOOKS = 3;
let t: WebhookTestService;
let rx: HttpsReceiver;
beforeAll(async () => {
  t = await startWebhookService({ options: { maxWebhooks: MAX_WEBHOOKS } });
  rx = startHttpsReceiver(() => new Response('ok'));
});
afterAll(async () => {
  await rx.stop();
  await t.stop();
});

/** A fresh organization for each test: the allowance of this service is small. */
async function asNewOrg() {
  const { organization, apiKey } = await t.service.ctx.orgs.create('Input');
  return (method: string, path: string, body?: unknown, raw?: string) =>
    t.call(method, path, {
      orgId: organization.id,
      key: apiKey,
      ...(body !== undefined ? { body } : {}),
      ...(raw !== undefined ? { raw, headers: { 'content-type': 'application/json' } } : {}),
    });
}

let n = 0;
const url = () => `https://a.hooks.test/input-${++n}`;
const message = (r: { json: { errors?: Array<{ message: string }> } }) => r.json.errors?.[0]?.message ?? '';
const expect400 = (r: { status: number; json: { errors?: Array<{ message: string }> } }, text: string) => {
  expect({ status: r.status, message: message(r) }).toEqual({
    status: 400,
    message: expect.stringContaining(text),
  });
};

describe('free text', () => {
  it('refuses a lone surrogate in name or description rather than store it altered', async () => {
    const call = await asNewOrg();
    expect400(
      await call('POST', '/organizations/webhooks', { name: 'a\ud800b', target_url: url() }),
      'body.name: must be well-formed Unicode',
    );
    const made = await call('POST', '/organizations/webhooks', {
      name: 'ok \ud83d\ude00',
      target_url: url(),
    });
    expect(made.json.result.name).toBe('ok \ud83d\ude00');
    expect400(
      await call('PATCH', `/organizations/webhooks/${made.json.result.id}`, { description: '\udc00' }),
      'body.description: must be well-formed Unicode',
    );
  });

  it('refuses an array where the body must be an object', async () => {
    const call = await asNewOrg();
    const id = (await call('POST', '/organizations/webhooks', { name: 'ok', target_url: url() })).json.result
      .id;
    for (const [method, path] of [
      ['POST', '/organizations/webhooks'],
      ['PATCH', `/organizations/webhooks/${id}`],
      ['POST', `/organizations/webhooks/${id}/triggers`],
      ['POST', `/organizations/webhooks/${id}/recover`],
    ] as const)
      expect400(await call(method, path, []), 'body: must be a JSON object, not an array');
  });

  it('refuses a NUL character in name or description with 400, on create and on update', async () => {
    const call = await asNewOrg();
    const nul = 'before\u0000after';
    expect400(
      await call('POST', '/organizations/webhooks', { name: nul, target_url: url() }),
      'body.name: must not contain the NUL character',
    );
    expect400(
      await call('POST', '/organizations/webhooks', { name: 'ok', description: nul, target_url: url() }),
      'body.description: must not contain the NUL character',
    );
    const id = (await call('POST', '/organizations/webhooks', { name: 'ok', target_url: url() })).json.result
      .id;
    expect400(await call('PATCH', `/organizations/webhooks/${id}`, { name: nul }), 'body.name');
    expect400(await call('PATCH', `/organizations/webhooks/${id}`, { description: nul }), 'body.description');
    // The other free-text fields are checked against their lists or formats, never stored raw.
    expect400(
      await call('POST', `/organizations/webhooks/${id}/triggers`, {
        trigger_type: 'event',
        trigger_name: 'PersonCreated_v1\u0000',
      }),
      'body.trigger_name',
    );
    expect400(
      await call('POST', '/test-events', [{ event_name: `RoleCreated_v1${'\u0000'}` }]),
      'event_name',
    );
    expect400(
      await call('PATCH', `/organizations/webhooks/${id}`, { target_url: 'https://a.hooks.test/x\u0000' }),
      'body.target_url: must not contain control characters',
    );
  });
});

describe('custom_headers', () => {
  it('refuses an array or a scalar in place of the object, on create and on update', async () => {
    const call = await asNewOrg();
    const expected = 'body.custom_headers: must be an object of header name to an array of strings';
    for (const headers of [[], [['X-A', 'b']], 'X-A: b', 7])
      expect400(
        await call('POST', '/organizations/webhooks', {
          name: 'h',
          target_url: url(),
          custom_headers: headers,
        }),
        expected,
      );
    const id = (await call('POST', '/organizations/webhooks', { name: 'h', target_url: url() })).json.result
      .id;
    expect400(await call('PATCH', `/organizations/webhooks/${id}`, { custom_headers: [] }), expected);
  });

  it('refuses __proto__ as a header name rather than lose it', async () => {
    const call = await asNewOrg();
    const raw = `{"name":"h","target_url":"${url()}","custom_headers":{"X-A":["a"],"__proto__":["x"]}}`;
    expect400(
      await call('POST', '/organizations/webhooks', undefined, raw),
      'body.custom_headers: "__proto__" is not accepted as a header name',
    );
  });

  it('keeps and delivers the header names constructor and prototype', async () => {
    const call = await asNewOrg();
    const headers = { constructor: ['c'], prototype: ['p'], 'X-A': ['a'] };
    const target = rx.url(`/input-${++n}`, 'a.hooks.test');
    const made = await call('POST', '/organizations/webhooks', {
      name: 'h',
      target_url: target,
      custom_headers: headers,
    });
    await expectStatus(made, 201);
    expect(made.json.result.custom_headers).toEqual(headers);
    const id = made.json.result.id;
    expect((await call('GET', `/organizations/webhooks/${id}`)).json.result.custom_headers).toEqual(headers);
    await call('POST', `/organizations/webhooks/${id}/triggers`, {
      trigger_type: 'event',
      trigger_name: 'RoleCreated_v1',
    });
    await expectStatus(await call('POST', '/test-events', [{ event_name: 'RoleCreated_v1' }]), 201);
    const path = new URL(target).pathname;
    await until(() => rx.requests.some((r) => r.path === path), 10_000, 'the delivery');
    const received = rx.requests.find((r) => r.path === path)!;
    expect([received.headers.get('constructor'), received.headers.get('prototype')]).toEqual(['c', 'p']);
    const patched = await call('PATCH', `/organizations/webhooks/${id}`, {
      custom_headers: { constructor: ['c2'] },
    });
    expect(patched.json.result.custom_headers).toEqual({ constructor: ['c2'] });
  });
});

describe('target_url', () => {
  it('stores the host without its trailing dot, so the dot does not make a second webhook', async () => {
    const call = await asNewOrg();
    const first = await call('POST', '/organizations/webhooks', {
      name: 'h',
      target_url: 'https://a.hooks.test./dotted',
    });
    await expectStatus(first, 201);
    expect(first.json.result.target_url).toBe('https://a.hooks.test/dotted');
    for (const spelling of [
      'https://a.hooks.test/dotted',
      'https://A.HOOKS.TEST./dotted',
      'https://a.hooks.test%2e/dotted',
    ]) {
      const again = await call('POST', '/organizations/webhooks', { name: 'h', target_url: spelling });
      expect({ spelling, status: again.status }).toEqual({ spelling, status: 409 });
    }
  });

  it('answers 400 naming the rule for the edge cases of a host', async () => {
    const call = await asNewOrg();
    const cases: Array<[string, string]> = [
      ['https://localhost../x', 'must not name localhost'],
      ['https:///x', 'must name its host right after https://'],
      ['https:/a.hooks.test/x', 'must name its host right after https://'],
      ['https://a.hooks.test:0/x', 'must not use port 0'],
      ['https://a..hooks.test/x', 'must not have an empty label'],
      ['https://*.hooks.test/x', 'must have a host of letters, digits and hyphens'],
      ['https://a_b.hooks.test/x', 'must have a host of letters, digits and hyphens'],
    ];
    for (const [target, expected] of cases)
      expect400(
        await call('POST', '/organizations/webhooks', { name: 'h', target_url: target }),
        `body.target_url: ${expected}`,
      );
  });
});

describe('the webhook allowance', () => {
  it('holds under concurrent creates, and answers 400 naming the limit past it', async () => {
    const call = await asNewOrg();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call('POST', '/organizations/webhooks', { name: `racer ${i}`, target_url: url() }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(MAX_WEBHOOKS).fill(201), ...Array(12 - MAX_WEBHOOKS).fill(400)]);
    const refused = answers.find((r) => r.status === 400)!;
    expect(refused.json.errors[0]).toEqual({
      httpcode: 400,
      message: expect.stringContaining(`the limit is ${MAX_WEBHOOKS} webhooks per organization`),
    });
    expect((await call('GET', '/organizations/webhooks')).json.result).toHaveLength(MAX_WEBHOOKS);
  });

  it('holds when creates meet in the store, with no request handling between them', async () => {
    // Requests through the HTTP layer on PGlite reach the store one by one; straight calls overlap, as
    // requests do on Postgres with a connection pool: each count would run before any insert.
    const { organization } = await t.service.ctx.orgs.create('Racers');
    const { storage, secrets, clock } = t.service.ctx;
    const store = createWebhookStore({ storage, secrets, clock, maxWebhooks: MAX_WEBHOOKS });
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        store.create(organization.id, { name: `racer ${i}`, targetUrl: `https://a.hooks.test/racer-${i}` }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(MAX_WEBHOOKS);
    for (const r of results)
      if (r.status === 'rejected') expect(r.reason).toMatchObject({ status: 400, code: 'TOO_MANY_WEBHOOKS' });
    expect(await store.list(organization.id)).toHaveLength(MAX_WEBHOOKS);
  });
});

describe('recover', () => {
  it('takes since only as an RFC 3339 time, and names since otherwise', async () => {
    const call = await asNewOrg();
    const id = (await call('POST', '/organizations/webhooks', { name: 'h', target_url: url() })).json.result
      .id;
    const recover = (since: unknown) => call('POST', `/organizations/webhooks/${id}/recover`, { since });
    for (const since of [
      'yesterday',
      '2024-01-01T00:00:00',
      '2024-01-01 00:00:00Z',
      '2024-02-30T00:00:00Z',
      '2024-01-01T00:00:00+0100',
      '2024-01-01T',
    ])
      expect400(await recover(since), 'body.since: must be an RFC 3339 time');
    for (const since of [
      '2024-01-01T00:00:00Z',
      '2024-01-01t00:00:00.123456789+01:00',
      '2016-12-31T23:59:60Z',
    ])
      expect({ since, status: (await recover(since)).status }).toEqual({ since, status: 202 });
  });
});
