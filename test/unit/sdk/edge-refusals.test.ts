import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eventDefinition } from '../../../core/events/catalogue/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { type SdkService, sdkService } from './fixture.ts';

let s: SdkService;
beforeAll(async () => {
  s = await sdkService();
});
afterAll(() => s.stop());

const sample = (name: string): Record<string, unknown> => ({
  event_name: name,
  ...eventDefinition(name)!.sample({ orgId: s.org.id, now: Date.now() }),
});
const edgeEvents = (body: unknown, o: CallOptions = {}) => s.call('POST', '/edge/events', { body, ...o });

async function refused(body: unknown, status: number, says: string, o: CallOptions = {}) {
  const res = await edgeEvents(body, o);
  await expectStatus(res, status);
  expect(res.json.errors[0].message).toContain(says);
}

describe('the edge ingest refuses, publishing nothing', () => {
  let before = 0;
  beforeAll(async () => {
    before = (await s.published('GateServerStarted_v1', 0)).length;
  });
  afterAll(async () => {
    // Every refusal below carried a valid GateServerStarted_v1 beside the bad event: none went out.
    expect(await s.published('GateServerStarted_v1')).toHaveLength(before);
  });

  it('a caller without the API key, or with another organization’s', async () => {
    await refused([sample('GateServerStarted_v1')], 401, 'Service-API-Key', { key: null });
    const other = await s.service.ctx.orgs.create('Other');
    await refused([sample('GateServerStarted_v1')], 403, 'does not belong to organization', {
      key: other.apiKey,
    });
  });

  it('a cloud-provider event, as not subscribable', async () => {
    await refused(
      [sample('GateServerStarted_v1'), sample('GCPServiceAccountDeleted_v1')],
      400,
      'body[1].event_name: GCPServiceAccountDeleted_v1 is a cloud-provider event; those are not subscribable, and the edge ingest does not take them',
    );
  });

  it('an event_name left out, or given as something else than a name, saying which', async () => {
    const { event_name: _, ...unnamed } = sample('GateServerStarted_v1');
    await refused([sample('GateServerStarted_v1'), unnamed], 400, 'body[1].event_name: required');
    for (const [name, got] of [
      [5, 'number'],
      ['', 'an empty string'],
      [null, 'null'],
      [['GateServerStarted_v1'], 'an array'],
    ] as const)
      await refused(
        { ...sample('GateServerStarted_v1'), event_name: name },
        400,
        `body.event_name: must be the event's catalogue name, a non-empty string (got ${got})`,
      );
  });

  it('an unknown event, and events of the catalogue that are not the edge’s', async () => {
    await refused(
      [sample('GateServerStarted_v1'), { event_name: 'GateStopped_v1' }],
      400,
      'is not an event of the catalogue',
    );
    await refused(
      [sample('GateServerStarted_v1'), sample('ServiceSDKLoaded_v1')],
      400,
      'ServiceSDKLoaded_v1 is not taken here; the edge ingest accepts GateServerStarted_v1, GateRequestHandled_v1, GateRequestCredentialFound_v1, MitmAttackDetected_v1',
    );
    await refused(
      [sample('GateServerStarted_v1'), sample('RoleDeleted_v1')],
      400,
      'RoleDeleted_v1 is not taken here',
    );
  });

  it('members missing, unknown or of the wrong kind, naming each; nothing is filled in', async () => {
    const { analytics_metadata: _, ...noAnalytics } = sample('GateRequestHandled_v1');
    await refused([sample('GateServerStarted_v1'), noAnalytics], 400, 'body[1].analytics_metadata: required');
    await refused(
      [
        sample('GateServerStarted_v1'),
        { ...sample('MitmAttackDetected_v1'), client_ip_address: 'not-an-ip' },
      ],
      400,
      'body[1].client_ip_address: must be an IPv4 or IPv6 address',
    );
    await refused(
      [
        sample('GateServerStarted_v1'),
        { ...sample('MitmAttackDetected_v1'), allowed_domains: 'example.com' },
      ],
      400,
      'body[1].allowed_domains',
    );
    await refused(
      [sample('GateServerStarted_v1'), { ...sample('GateServerStarted_v1'), uptime: 3 }],
      400,
      'body[1].uptime: unknown member',
    );
    const credential = sample('GateRequestCredentialFound_v1');
    await refused(
      [
        sample('GateServerStarted_v1'),
        { ...credential, credential: { ...(credential.credential as object), credential_id: 'x' } },
      ],
      400,
      'body[1].credential.credential_id: must be a UUID',
    );
  });

  it('text an event cannot carry (U+0000, a lone surrogate), naming where: a 400, never a 500', async () => {
    const mitm = sample('MitmAttackDetected_v1');
    await refused(
      [sample('GateServerStarted_v1'), { ...mitm, user_agent: 'curl\u0000/8' }],
      400,
      'body[1].user_agent: must not contain the NUL character',
    );
    await refused(
      { ...mitm, mitm_domain: 'login\ud800.example.net' },
      400,
      'body.mitm_domain: must be well-formed Unicode (a lone surrogate is not)',
    );
    await refused(
      [sample('GateServerStarted_v1'), { ...mitm, allowed_domains: ['example.com', 'a\udc00'] }],
      400,
      'body[1].allowed_domains[1]: must be well-formed',
    );
    const handled = sample('GateRequestHandled_v1');
    const plugins = handled.plugins as Array<Record<string, unknown>>;
    await refused(
      [{ ...handled, plugins: [{ ...plugins[0], plugin_metadata: { 'k\u0000': 1 } }] }],
      400,
      'body[0].plugins[0].plugin_metadata: the member name "k\\u0000" must not contain the NUL character',
    );
    // A character beyond the BMP (a surrogate pair) is well-formed and goes through.
    await expectStatus(await edgeEvents({ ...mitm, user_agent: 'agent 😀' }), 202);
  });

  it('bodies over 512 KiB, with more than 100 events, or not JSON', async () => {
    const big = { ...sample('GateServerStarted_v1'), comment: 'x'.repeat(530_000) };
    await refused([sample('GateServerStarted_v1'), big], 413, 'larger than the limit of 524288 bytes');
    await refused(
      Array.from({ length: 101 }, () => sample('GateServerStarted_v1')),
      400,
      'body: must hold 1 to 100 events (got 101)',
    );
    const res = await s.call('POST', '/edge/events', { raw: 'GateServerStarted_v1' });
    await expectStatus(res, 400);
  });
});

describe('the edge ingest', () => {
  it('takes one event, or many, and MitmAttackDetectedV1 as the MITM event', async () => {
    const one = await edgeEvents(sample('GateServerStarted_v1'));
    await expectStatus(one, 202);
    expect(one.json.result.accepted).toBe(1);
    const mitm = { ...sample('MitmAttackDetected_v1'), event_name: 'MitmAttackDetectedV1' };
    const many = await edgeEvents([mitm, sample('GateRequestHandled_v1')]);
    await expectStatus(many, 202);
    const [published] = (await s.published('MitmAttackDetected_v1')).filter(
      (e) => e.event_metadata.event_id === many.json.result.event_ids[0],
    );
    const { event_name: _, ...members } = mitm;
    const { event_metadata, ...got } = published!;
    expect(event_metadata).toMatchObject({ event_name: 'MitmAttackDetected_v1', source: 1 });
    expect(got).toEqual(members);
  });
});
