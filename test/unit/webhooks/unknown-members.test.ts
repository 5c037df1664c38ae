import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startWebhookService, type WebhookTestService } from '../../helpers/webhooks.ts';

let t: WebhookTestService;
let id: string;
beforeAll(async () => {
  t = await startWebhookService();
  const made = await t.call('POST', '/organizations/webhooks', {
    body: { name: 'strict', target_url: 'https://a.hooks.test/strict' },
  });
  await expectStatus(made, 201);
  id = made.json.result.id;
});
afterAll(() => t.stop());

const FAKE = '0190a5c8-0000-7000-8000-000000000000';

/** Asserts a 400 whose message names `where` and lists `accepted`. */
async function refused(
  res: Awaited<ReturnType<WebhookTestService['call']>>,
  where: string,
  accepted: string,
) {
  await expectStatus(res, 400);
  expect(res.json.errors[0].message).toContain(where);
  expect(res.json.errors[0].message).toContain(accepted);
}

describe('webhook routes refuse members and parameters they do not take', () => {
  it('refuses an unknown member of a webhook create or update, and creates nothing', async () => {
    const body = { name: 'x', target_url: 'https://b.hooks.test/x', extra: 1 };
    await refused(
      await t.call('POST', '/organizations/webhooks', { body }),
      'body.extra: is not a member of this body',
      'accepted: target_url, name, description, custom_headers, timeout',
    );
    const list = await t.call('GET', '/organizations/webhooks');
    await expectStatus(list, 200);
    expect(list.json.result.map((w: { name: string }) => w.name)).toEqual(['strict']);
    await refused(
      await t.call('PATCH', `/organizations/webhooks/${id}`, { body: { nmae: 'typo' } }),
      'body.nmae',
      'accepted: target_url, name',
    );
  });

  it('refuses an unknown member of a trigger and of a test event', async () => {
    await refused(
      await t.call('POST', `/organizations/webhooks/${id}/triggers`, {
        body: { trigger_type: 'event', trigger_name: 'PersonCreated_v1', x: 1 },
      }),
      'body.x',
      'accepted: trigger_type, trigger_name',
    );
    const triggers = await t.call('GET', `/organizations/webhooks/${id}/triggers`);
    await expectStatus(triggers, 200);
    expect(triggers.json.result).toEqual([]);
    await refused(
      await t.call('POST', '/test-events', { body: [{ event_name: 'PersonCreated_v1', foo: 5 }] }),
      'body[0].foo',
      'accepted: event_name, count, duplicates, analytics_correlation_id',
    );
  });

  it('refuses a member in the body of a resend, and an unknown one in a recover', async () => {
    const resend = `/organizations/webhooks/${id}/deliveries/${FAKE}/resend`;
    await refused(await t.call('POST', resend, { body: { x: 1 } }), 'body.x', 'it takes none');
    await refused(
      await t.call('POST', `/organizations/webhooks/${id}/recover`, {
        body: { since: '2020-01-01T00:00:00Z', until: 'now' },
      }),
      'body.until',
      'accepted: since',
    );
    // An empty object, or no body at all, is still a resend (of no delivery here: 404).
    await expectStatus(await t.call('POST', resend, { body: {} }), 404);
    await expectStatus(await t.call('POST', resend), 404);
  });

  it('refuses an unknown query parameter, naming it and the accepted ones', async () => {
    const trigger = 'trigger_type=event&trigger_name=PersonCreated_v1';
    await expectStatus(
      await t.call('POST', `/organizations/webhooks/${id}/triggers`, {
        body: { trigger_type: 'event', trigger_name: 'PersonCreated_v1' },
      }),
      201,
    );
    await refused(
      await t.call('DELETE', `/organizations/webhooks/${id}/triggers?${trigger}&x=1`),
      'query.x: is not a parameter of this operation',
      'accepted: trigger_type, trigger_name',
    );
    const still = await t.call('GET', `/organizations/webhooks/${id}/triggers`);
    expect(still.json.result).toHaveLength(1);
    await refused(
      await t.call('GET', '/organizations/webhooks?foo=1'),
      'query.foo: is not a parameter of this operation',
      'it takes none',
    );
    await refused(await t.call('GET', `/organizations/webhooks/${id}?foo=1`), 'query.foo', 'it takes none');
    await refused(
      await t.call('GET', `/organizations/webhooks/${id}/deliveries?stauts=dropped`),
      'query.stauts',
      'accepted: status, limit, cursor',
    );
  });

  it('answers a webhook ID that is not valid percent-encoding with the shared message', async () => {
    const res = await t.call('GET', '/organizations/webhooks/a%b');
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toContain(
      'params.webhook_id: the webhook id in the path is not valid',
    );
  });
});
