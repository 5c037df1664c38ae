import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { ACCEPTED_TRIGGER_NAMES } from '../../../core/events/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startWebhookService, type WebhookTestService } from '../../helpers/webhooks.ts';

let t: WebhookTestService;
beforeAll(async () => {
  t = await startWebhookService();
});
afterAll(async () => {
  await t.stop();
});

let n = 0;
const url = (path = `/hook-${++n}`) => `https://a.hooks.test${path}`;
const create = (body: Record<string, unknown>) =>
  t.call('POST', '/organizations/webhooks', { body: { name: 'hook', target_url: url(), ...body } });
const message = (r: { json: { errors?: Array<{ message: string }> } }) => r.json.errors?.[0]?.message ?? '';

describe('webhook operations', () => {
  it('creates a webhook (201) with its fields, the timeout and the custom headers', async () => {
    const target = url();
    const r = await create({
      target_url: target,
      name: 'Orders',
      description: 'order events',
      custom_headers: { 'X-Secret': ['s1', 's2'] },
      timeout: '1500ms',
    });
    await expectStatus(r, 201);
    expect(r.json).toEqual({
      result: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Orders',
        description: 'order events',
        target_url: target,
        custom_headers: { 'X-Secret': ['s1', 's2'] },
        timeout: '1.5s',
      },
    });
    const got = await t.call('GET', `/organizations/webhooks/${r.json.result.id}`);
    await expectStatus(got, 200);
    expect(got.json).toEqual(r.json);
  });

  it('shows timeout "0s" and no custom_headers when they are unset', async () => {
    const r = await create({});
    expect(r.json.result.timeout).toBe('0s');
    expect(r.json.result).not.toHaveProperty('custom_headers');
    expect(r.json.result.description).toBe('');
  });

  it('seals custom headers at rest', async () => {
    const r = await create({ custom_headers: { Authorization: ['Bearer very-secret-token'] } });
    const [row] = await t.service.ctx.storage.query<{ custom_headers: string }>(
      (await import('drizzle-orm')).sql`select custom_headers from webhooks where id = ${r.json.result.id}`,
    );
    expect(row!.custom_headers).not.toContain('very-secret-token');
  });

  it('lists the organization webhooks, and only them', async () => {
    const other = await t.service.ctx.orgs.create('Other');
    const theirs = await t.call('POST', '/organizations/webhooks', {
      orgId: other.organization.id,
      key: other.apiKey,
      body: { name: 'theirs', target_url: url() },
    });
    await expectStatus(theirs, 201);
    const mine = await create({ name: 'mine' });
    const list = await t.call('GET', '/organizations/webhooks');
    await expectStatus(list, 200);
    const ids = list.json.result.map((w: { id: string }) => w.id);
    expect(ids).toContain(mine.json.result.id);
    expect(ids).not.toContain(theirs.json.result.id);
    // Another organization's webhook is 404 for this one, through every operation.
    const id = theirs.json.result.id;
    await expectStatus(await t.call('GET', `/organizations/webhooks/${id}`), 404);
    await expectStatus(await t.call('PATCH', `/organizations/webhooks/${id}`, { body: { name: 'x' } }), 404);
    await expectStatus(await t.call('DELETE', `/organizations/webhooks/${id}`), 404);
    await expectStatus(await t.call('GET', `/organizations/webhooks/${id}/triggers`), 404);
  });

  it('answers 400 naming the field and rule for a bad target_url, name, timeout or header', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ target_url: 'http://a.hooks.test/x' }, 'body.target_url: must use https, not http'],
      [{ target_url: 'https://127.0.0.1/x' }, 'body.target_url: must name a host, not an IP address'],
      [{ target_url: 'https://[::ffff:127.0.0.1]/x' }, 'not an IP address'],
      [{ target_url: 'https://localhost./x' }, 'body.target_url: must not name localhost'],
      [{ target_url: 'https://a.hooks.test/x?y=1' }, 'body.target_url: must not have a query'],
      [{ target_url: 'https://a.hooks.test/x#y' }, 'body.target_url: must not have a fragment'],
      [{ name: '' }, 'body.name: must not be empty'],
      [{ name: undefined }, 'body.name'],
      [{ timeout: '25s' }, 'body.timeout: must be at most 20s'],
      [{ timeout: '-1s' }, 'body.timeout: must not be negative'],
      [{ timeout: 'ten seconds' }, 'body.timeout: must be a duration'],
      [{ custom_headers: { Host: ['x'] } }, 'body.custom_headers: "Host" may not be set'],
      [{ custom_headers: { 'Content-Type': ['text/plain'] } }, '"Content-Type" may not be set'],
      [{ custom_headers: { 'X-A': ['a\nb'] } }, '"X-A"[0] must be visible ASCII'],
      [{ custom_headers: { 'X-A': 'not-an-array' } }, 'body.custom_headers: "X-A" must be a non-empty array'],
    ];
    for (const [body, expected] of cases) {
      const r = await create(body);
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
      expect(message(r)).toContain(expected);
      expect(r.json.errors[0].httpcode).toBe(400);
    }
  });

  it('answers 409 for a target_url the organization already uses, however it is spelled', async () => {
    const first = await create({ target_url: 'https://a.hooks.test/unique' });
    await expectStatus(first, 201);
    for (const spelling of ['https://a.hooks.test/unique', 'HTTPS://A.HOOKS.TEST:443/unique']) {
      const r = await create({ target_url: spelling });
      await expectStatus(r, 409);
      expect(message(r)).toContain('already has the target_url https://a.hooks.test/unique');
    }
    // Another organization may use the same URL.
    const other = await t.service.ctx.orgs.create('Other');
    const theirs = await t.call('POST', '/organizations/webhooks', {
      orgId: other.organization.id,
      key: other.apiKey,
      body: { name: 'theirs', target_url: 'https://a.hooks.test/unique' },
    });
    await expectStatus(theirs, 201);
  });

  it('keeps target_url unique under many concurrent creates: one 201, the rest 409', async () => {
    const target = 'https://a.hooks.test/contended';
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => create({ target_url: target, name: `racer ${i}` })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(39);
  });

  it('updates with the same rules; custom_headers replaces, null clears, timeout null returns to defaults', async () => {
    const r = await create({ custom_headers: { 'X-Old': ['1'], 'X-Keep': ['k'] }, timeout: '5s' });
    const id = r.json.result.id;
    const patched = await t.call('PATCH', `/organizations/webhooks/${id}`, {
      body: { name: 'renamed', custom_headers: { 'X-New': ['2'] } },
    });
    await expectStatus(patched, 200);
    expect(patched.json.result).toMatchObject({
      name: 'renamed',
      custom_headers: { 'X-New': ['2'] },
      timeout: '5s',
    });
    const cleared = await t.call('PATCH', `/organizations/webhooks/${id}`, {
      body: { custom_headers: null, timeout: null },
    });
    expect(cleared.json.result.timeout).toBe('0s');
    expect(cleared.json.result).not.toHaveProperty('custom_headers');
    // What a webhook without a timeout reads back as, written back: still unset, not a 400.
    await expectStatus(
      await t.call('PATCH', `/organizations/webhooks/${id}`, { body: { timeout: '5s' } }),
      200,
    );
    const roundTrip = await t.call('PATCH', `/organizations/webhooks/${id}`, {
      body: { ...cleared.json.result, id: undefined },
    });
    await expectStatus(roundTrip, 200);
    expect(roundTrip.json.result.timeout).toBe('0s');
    const bad = await t.call('PATCH', `/organizations/webhooks/${id}`, {
      body: { target_url: 'https://10.0.0.1/' },
    });
    await expectStatus(bad, 400);
    const taken = await create({});
    const clash = await t.call('PATCH', `/organizations/webhooks/${id}`, {
      body: { target_url: taken.json.result.target_url },
    });
    await expectStatus(clash, 409);
  });

  it('deletes a webhook (204) and its triggers; then 404', async () => {
    const r = await create({});
    const id = r.json.result.id;
    await t.call('POST', `/organizations/webhooks/${id}/triggers`, {
      body: { trigger_type: 'event', trigger_name: 'PersonCreated_v1' },
    });
    const del = await t.call('DELETE', `/organizations/webhooks/${id}`, {
      headers: { 'Service-Required-Consistency': 'all_regions', 'Service-Required-Consistency-Timeout': '5' },
    });
    await expectStatus(del, 204);
    expect(del.text).toBe('');
    await expectStatus(await t.call('GET', `/organizations/webhooks/${id}`), 404);
    await expectStatus(await t.call('DELETE', `/organizations/webhooks/${id}`), 404);
    const { sql } = await import('drizzle-orm');
    const left = await t.service.ctx.storage.query(
      sql`select 1 from webhook_triggers where webhook_id = ${id}`,
    );
    expect(left).toHaveLength(0);
  });

  it('validates the consistency headers of a delete and a malformed id', async () => {
    const r = await create({});
    const id = r.json.result.id;
    const bad = await t.call('DELETE', `/organizations/webhooks/${id}`, {
      headers: { 'Service-Required-Consistency': 'everywhere' },
    });
    await expectStatus(bad, 400);
    expect(message(bad)).toContain('Service-Required-Consistency');
    const badTimeout = await t.call('DELETE', `/organizations/webhooks/${id}`, {
      headers: { 'Service-Required-Consistency-Timeout': '121' },
    });
    await expectStatus(badTimeout, 400);
    const malformed = await t.call('DELETE', '/organizations/webhooks/not-a-uuid');
    await expectStatus(malformed, 400);
    expect(message(malformed)).toContain('webhook_id must be a UUID');
  });

  it('needs the API key of the organization', async () => {
    await expectStatus(await t.call('GET', '/organizations/webhooks', { key: null }), 401);
    const other = await t.service.ctx.orgs.create('Other');
    await expectStatus(await t.call('GET', '/organizations/webhooks', { key: other.apiKey }), 403);
  });
});

describe('triggers', () => {
  it('creates a trigger (201 {}), idempotently, lists and deletes it by query parameters', async () => {
    const id = (await create({})).json.result.id;
    const path = `/organizations/webhooks/${id}/triggers`;
    const body = { trigger_type: 'event', trigger_name: 'PersonCreated_v1' };
    const first = await t.call('POST', path, { body });
    await expectStatus(first, 201);
    expect(first.json).toEqual({});
    await expectStatus(await t.call('POST', path, { body }), 201);
    await t.call('POST', path, { body: { trigger_type: 'sync_hook', trigger_name: 'token_minted' } });
    const list = await t.call('GET', path);
    expect(list.json).toEqual({
      result: [
        { trigger_type: 'event', trigger_name: 'PersonCreated_v1' },
        { trigger_type: 'sync_hook', trigger_name: 'token_minted' },
      ],
    });
    const del = await t.call('DELETE', `${path}?trigger_type=event&trigger_name=PersonCreated_v1`);
    await expectStatus(del, 204);
    expect((await t.call('GET', path)).json.result).toEqual([
      { trigger_type: 'sync_hook', trigger_name: 'token_minted' },
    ]);
    const again = await t.call('DELETE', `${path}?trigger_type=event&trigger_name=PersonCreated_v1`);
    await expectStatus(again, 404);
    const missing = await t.call('DELETE', `${path}?trigger_type=event`);
    await expectStatus(missing, 400);
    expect(message(missing)).toContain('trigger_name');
  });

  it('accepts every name of the spec list, and both spellings of the MITM trigger as one', async () => {
    const id = (await create({})).json.result.id;
    const path = `/organizations/webhooks/${id}/triggers`;
    for (const name of ACCEPTED_TRIGGER_NAMES) {
      const r = await t.call('POST', path, { body: { trigger_type: 'event', trigger_name: name } });
      expect({ name, status: r.status }).toEqual({ name, status: 201 });
    }
    await t.call('POST', path, { body: { trigger_type: 'event', trigger_name: 'MitmAttackDetected_v1' } });
    const names = (await t.call('GET', path)).json.result.map(
      (x: { trigger_name: string }) => x.trigger_name,
    );
    expect(names).toHaveLength(ACCEPTED_TRIGGER_NAMES.length);
    expect([...names].sort()).toEqual([...ACCEPTED_TRIGGER_NAMES].sort());
    expect(names.filter((x: string) => x.startsWith('Mitm'))).toEqual(['MitmAttackDetectedV1']);
    const del = await t.call('DELETE', `${path}?trigger_type=event&trigger_name=MitmAttackDetectedV1`);
    await expectStatus(del, 204);
  });

  it('refuses cloud-provider and unknown event names with the accepted list, and other sync hooks', async () => {
    const id = (await create({})).json.result.id;
    const path = `/organizations/webhooks/${id}/triggers`;
    for (const name of [
      'AWSIAMRoleCreated_v1',
      'GCPIAMPolicyBindingUpdated_v1',
      'ActiveDirectorySPNCreated_v1',
      'Bogus_v1',
    ]) {
      const r = await t.call('POST', path, { body: { trigger_type: 'event', trigger_name: name } });
      await expectStatus(r, 400);
      expect(message(r)).toContain(
        `${JSON.stringify(name)} is not an accepted event trigger name; accepted: AuthenticationSucceeded_v1`,
      );
    }
    const hook = await t.call('POST', path, {
      body: { trigger_type: 'sync_hook', trigger_name: 'PersonCreated_v1' },
    });
    await expectStatus(hook, 400);
    expect(message(hook)).toContain('the only one is token_minted');
    const type = await t.call('POST', path, { body: { trigger_type: 'cron', trigger_name: 'x' } });
    await expectStatus(type, 400);
    const unknown = await t.call(
      'POST',
      '/organizations/webhooks/01900000-0000-7000-8000-000000000000/triggers',
      {
        body: { trigger_type: 'event', trigger_name: 'PersonCreated_v1' },
      },
    );
    await expectStatus(unknown, 404);
  });
});
