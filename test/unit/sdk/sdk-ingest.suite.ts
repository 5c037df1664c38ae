import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createWebhookVerifier, type WebhookVerifier } from 'identity-service/receiver';
import { decodeJwt } from 'jose';
import { eventDefinition } from '../../../core/events/catalogue/index.ts';
import { EventSource } from '../../../core/events/types.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { IdentityTestService } from '../../helpers/identity-service.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { until } from '../../helpers/webhooks.ts';

// The sdk and edge plugins beside the identity plugins and webhooks, over a loopback port: every event
// they publish is received at a real HTTPS event webhook, verified, and compared member by member.

const EVENTS = [
  'ServiceSDKLoaded_v1',
  'VirtualPageLoaded_v1',
  'PersonIdentified_v1',
  'PersonLoggedOut_v1',
  'GateServerStarted_v1',
  'GateRequestHandled_v1',
  'GateRequestCredentialFound_v1',
  'MitmAttackDetectedV1',
];
const APP = 'https://app.example.com';
const CORRELATION = '0192f0c4-8a6e-7c1b-9d2e-3f4a5b6c7d8e';
/** A browser on the allowed origin, behind the one trusted proxy the service is told of. */
const BROWSER = {
  origin: APP,
  referer: `${APP}/pricing`,
  'user-agent': 'Mozilla/5.0 (SuiteTest)',
  'service-sdk-version': '2.4.1',
  'service-analytics-correlation-id': CORRELATION,
  'x-forwarded-for': '198.51.100.23',
};

type Delivered = { name: string; event: Record<string, unknown> };

/**
 * The SDK ingest, logout and the edge ingest end to end on whatever storage and bus `start` gives (its
 * plugins must include sdk() and edge()), with an event webhook on a real HTTPS receiver.
 */
export function sdkIngestSuite(label: string, start: () => Promise<IdentityTestService>) {
  describe(label, () => {
    let t: IdentityTestService;
    let rx: HttpsReceiver;
    let target: string;
    let receiver: WebhookVerifier;
    /** Every event delivered so far, verified with the receiver helper, by event_id. */
    const delivered = new Map<string, Delivered>();

    beforeAll(async () => {
      t = await start();
      receiver = createWebhookVerifier({ baseUrl: t.baseUrl, orgId: t.org.id });
      rx = startHttpsReceiver(() => new Response(null, { status: 204 }));
      target = rx.url('/events', 'a.hooks.test');
      const made = await t.http('POST', '/organizations/webhooks', {
        body: { name: 'sdk', target_url: target },
      });
      await expectStatus(made, 201);
      for (const trigger_name of EVENTS)
        await expectStatus(
          await t.http('POST', `/organizations/webhooks/${made.json.result.id}/triggers`, {
            body: { trigger_type: 'event', trigger_name },
          }),
          201,
        );
      await expectStatus(
        await t.http('PUT', '/organizations/allowed-origins', { body: { allowed_origins: [APP] } }),
        200,
      );
    });
    afterAll(async () => {
      await rx.stop();
      await t.stop();
    });

    async function collect() {
      for (const q of rx.requests.splice(0)) {
        const { claims, event } = await receiver.verify({ body: q.body, url: target });
        expect(claims.trigger_type).toBe('event');
        delivered.set(claims.sub, { name: claims.trigger_name, event });
      }
    }
    /** The delivered events of these event_ids, in that order, waiting for all of them. */
    async function arrived(ids: string[]): Promise<Delivered[]> {
      await until(
        async () => {
          await collect();
          return ids.every((id) => delivered.has(id));
        },
        15_000,
        `events ${ids.join(', ')} at the webhook`,
      );
      return ids.map((id) => delivered.get(id)!);
    }
    /** The delivered events of that name about a person, waiting for `count` of them. */
    async function arrivedFor(name: string, personId: string, count = 1): Promise<Delivered[]> {
      const pick = () =>
        [...delivered.values()].filter(
          (d) =>
            d.event.person_id === personId &&
            (d.event.event_metadata as { event_name: string }).event_name === name,
        );
      await until(
        async () => {
          await collect();
          return pick().length >= count;
        },
        15_000,
        `${name} for ${personId}`,
      );
      return pick();
    }
    /** Members without event_metadata, after checking it names the event, its source and this organization. */
    function members(d: Delivered, name: string, source: number): Record<string, unknown> {
      const { event_metadata, ...rest } = d.event;
      expect(event_metadata).toMatchObject({
        event_name: name,
        source,
        organization_id: t.org.id,
        is_test_event: false,
      });
      // Exactly the catalogue's members: none missing (the optional ones aside), none added.
      const spec = eventDefinition(name)!.members;
      for (const m of spec) if (!m.optional) expect(Object.keys(rest)).toContain(m.name);
      for (const k of Object.keys(rest)) expect(spec.map((m) => m.name)).toContain(k);
      return rest;
    }
    async function personWithToken(o: CallOptions = {}) {
      const made = await t.http('POST', '/persons', {
        ...o,
        body: {
          handles: [{ type: 'username', value: `sdk-${crypto.randomUUID().slice(0, 8)}` }],
          region: 'europe-belgium',
        },
      });
      await expectStatus(made, 201);
      const personId: string = made.json.result.person_id;
      const minted = await t.http('POST', `/persons/${personId}/mint-token`, { ...o, body: {} });
      await expectStatus(minted, 201);
      return { personId, token: minted.json.result as string };
    }
    const sdkEvents = (body: unknown, headers: Record<string, string> = BROWSER) =>
      t.http('POST', '/sdk/events', { key: null, body, headers });

    describe('the SDK ingest', () => {
      it('publishes ServiceSDKLoaded_v1 from an allowed origin, its metadata taken from the request', async () => {
        const res = await sdkEvents({ event_name: 'ServiceSDKLoaded_v1' });
        await expectStatus(res, 202);
        expect(res.headers.get('access-control-allow-origin')).toBe(APP);
        expect(res.json.result.accepted).toBe(1);
        const [loaded] = await arrived(res.json.result.event_ids);
        expect(members(loaded!, 'ServiceSDKLoaded_v1', EventSource.SDK)).toEqual({
          analytics_metadata: { analytics_correlation_id: CORRELATION, client_ip_address: '198.51.100.23' },
          browser_metadata: {
            user_agent: 'Mozilla/5.0 (SuiteTest)',
            window_location: `${APP}/pricing`,
            service_sdk_version: '2.4.1',
          },
        });
      });

      it("publishes VirtualPageLoaded_v1 without a person, or with the token's person; the body's members win", async () => {
        const { personId, token } = await personWithToken();
        const sent = {
          event_name: 'VirtualPageLoaded_v1',
          analytics_metadata: {
            analytics_correlation_id: '0192f0c4-0000-7000-8000-000000000001',
            client_ip_address: '203.0.113.99',
          },
          browser_metadata: { window_location: `${APP}/docs#install` },
        };
        const anonymous = await sdkEvents(sent);
        await expectStatus(anonymous, 202);
        const signedIn = await t.http('POST', '/sdk/events', {
          key: null,
          body: [sent],
          headers: { ...BROWSER, authorization: `Bearer ${token}` },
        });
        await expectStatus(signedIn, 202);
        const [first, second] = await arrived([
          ...anonymous.json.result.event_ids,
          ...signedIn.json.result.event_ids,
        ]);
        const page = {
          // The client's own correlation ID stays; the address it claims does not: the service saw another.
          analytics_metadata: {
            analytics_correlation_id: '0192f0c4-0000-7000-8000-000000000001',
            client_ip_address: '198.51.100.23',
          },
          browser_metadata: {
            user_agent: 'Mozilla/5.0 (SuiteTest)',
            window_location: `${APP}/docs#install`,
            service_sdk_version: '2.4.1',
          },
        };
        expect(members(first!, 'VirtualPageLoaded_v1', EventSource.SDK)).toEqual(page);
        expect(members(second!, 'VirtualPageLoaded_v1', EventSource.SDK)).toEqual({
          ...page,
          person_id: personId,
          region: 'europe-belgium',
        });
      });

      it("publishes PersonIdentified_v1 with the person's token, naming its person", async () => {
        const { personId, token } = await personWithToken();
        const res = await t.http('POST', '/sdk/events', {
          key: null,
          body: [
            { event_name: 'PersonIdentified_v1', person_id: personId },
            { event_name: 'ServiceSDKLoaded_v1' },
          ],
          headers: { ...BROWSER, authorization: `Bearer ${token}` },
        });
        await expectStatus(res, 202);
        expect(res.json.result.accepted).toBe(2);
        const [identified, loaded] = await arrived(res.json.result.event_ids);
        expect(members(identified!, 'PersonIdentified_v1', EventSource.SDK)).toMatchObject({
          person_id: personId,
          region: 'europe-belgium',
          analytics_metadata: { analytics_correlation_id: CORRELATION, client_ip_address: '198.51.100.23' },
        });
        expect(members(loaded!, 'ServiceSDKLoaded_v1', EventSource.SDK)).not.toHaveProperty('person_id');
      });
    });

    describe('logout', () => {
      it('revokes the token and emits PersonLoggedOut_v1; a second logout is 204 and emits nothing', async () => {
        const { personId, token } = await personWithToken();
        const out = await t.http('POST', '/logout', {
          key: null,
          body: { browser_metadata: { window_location: `${APP}/account` } },
          headers: { ...BROWSER, authorization: `Bearer ${token}` },
        });
        await expectStatus(out, 204);
        expect(out.headers.get('access-control-allow-origin')).toBe(APP);
        const validated = await t.http('POST', '/token/validate', { body: { token } });
        expect(validated.json.result).toEqual({
          valid: false,
          invalidity_reason: 'invalid_token_content',
          invalidity_detail: 'revoked',
        });

        const [loggedOut] = await arrivedFor('PersonLoggedOut_v1', personId);
        expect(members(loggedOut!, 'PersonLoggedOut_v1', EventSource.SDK)).toEqual({
          analytics_metadata: { analytics_correlation_id: CORRELATION, client_ip_address: '198.51.100.23' },
          browser_metadata: {
            user_agent: 'Mozilla/5.0 (SuiteTest)',
            window_location: `${APP}/account`,
            service_sdk_version: '2.4.1',
          },
          person_id: personId,
          region: 'europe-belgium',
        });

        const again = await t.http('POST', '/logout', {
          key: null,
          headers: { authorization: `Bearer ${token}` },
        });
        await expectStatus(again, 204);
        // The revoked token names nobody any more.
        const identify = await t.http('POST', '/sdk/events', {
          key: null,
          body: { event_name: 'PersonIdentified_v1' },
          headers: { authorization: `Bearer ${token}` },
        });
        await expectStatus(identify, 401);
        expect(identify.json.errors[0].message).toContain('revoked');
        // A later event of another kind has arrived, so the second logout's would have too.
        const marker = await sdkEvents({ event_name: 'ServiceSDKLoaded_v1' });
        await arrived(marker.json.result.event_ids);
        await Bun.sleep(200);
        await collect();
        expect(await arrivedFor('PersonLoggedOut_v1', personId)).toHaveLength(1);
      });
    });

    describe('concurrency', () => {
      it('reports one PersonLoggedOut_v1 when one token logs out many times at once', async () => {
        const { personId, token } = await personWithToken();
        const answers = await Promise.all(
          Array.from({ length: 8 }, () =>
            t.http('POST', '/logout', { key: null, headers: { authorization: `Bearer ${token}` } }),
          ),
        );
        for (const res of answers) await expectStatus(res, 204);
        await arrivedFor('PersonLoggedOut_v1', personId);
        const marker = await sdkEvents({ event_name: 'ServiceSDKLoaded_v1' });
        await arrived(marker.json.result.event_ids);
        await Bun.sleep(200);
        await collect();
        expect(await arrivedFor('PersonLoggedOut_v1', personId)).toHaveLength(1);
      });

      it('ends racing replacements of the allowed origins as one of them, never a 500', async () => {
        const lists = Array.from({ length: 6 }, (_, i) => [
          APP,
          `https://r${i}.example`,
          'https://shared.example',
        ]);
        const answers = await Promise.all(
          lists.map((allowed_origins) =>
            t.http('PUT', '/organizations/allowed-origins', { body: { allowed_origins } }),
          ),
        );
        for (const res of answers) await expectStatus(res, 200);
        const now = (await t.http('GET', '/organizations/allowed-origins')).json.result.allowed_origins;
        expect(lists.map((l) => [...l].sort())).toContainEqual(now);
        await expectStatus(
          await t.http('PUT', '/organizations/allowed-origins', { body: { allowed_origins: [APP] } }),
          200,
        );
      });
    });

    describe('the edge ingest', () => {
      it('publishes the Gate events and MitmAttackDetected_v1 with the members sent', async () => {
        const names = [
          'GateServerStarted_v1',
          'GateRequestHandled_v1',
          'GateRequestCredentialFound_v1',
          'MitmAttackDetected_v1',
        ];
        const sent = names.map((name) => eventDefinition(name)!.sample({ orgId: t.org.id, now: Date.now() }));
        const res = await t.http('POST', '/edge/events', {
          body: sent.map((m, i) => ({ event_name: names[i], ...m })),
        });
        await expectStatus(res, 202);
        expect(res.json.result.accepted).toBe(4);
        const got = await arrived(res.json.result.event_ids);
        got.forEach((d, i) => {
          const source = names[i] === 'MitmAttackDetected_v1' ? EventSource.Cloud : EventSource.Gate;
          expect(members(d, names[i]!, source)).toEqual(sent[i]!);
        });
        // The webhook subscribed with the spec's spelling, MitmAttackDetectedV1.
        expect(got[3]!.name).toBe('MitmAttackDetectedV1');
      });
    });

    describe('tenant isolation', () => {
      it('gives a second organization neither our origins, our tokens, our events nor our settings', async () => {
        const { token } = await personWithToken();
        const other = await t.service.ctx.orgs.create('Other');
        const theirs: CallOptions = { orgId: other.organization.id, key: other.apiKey };
        const before = delivered.size;

        // Our token on their organization: not a person token of theirs.
        for (const [path, body] of [
          ['/sdk/events', { event_name: 'PersonIdentified_v1' }],
          ['/logout', undefined],
        ] as const) {
          const res = await t.http('POST', path, {
            orgId: other.organization.id,
            key: null,
            body,
            headers: { authorization: `Bearer ${token}` },
          });
          await expectStatus(res, 401);
          expect(res.json.errors[0].message).toContain('wrong_organization');
        }
        expect((await t.http('POST', '/token/validate', { body: { token } })).json.result.valid).toBe(true);

        // Our allowed origin is ours: a browser on it calling them is refused.
        const foreign = await t.http('POST', '/sdk/events', {
          orgId: other.organization.id,
          key: null,
          body: { event_name: 'ServiceSDKLoaded_v1' },
          headers: BROWSER,
        });
        await expectStatus(foreign, 403);
        expect(foreign.headers.get('access-control-allow-origin')).toBeNull();

        // Their key on our organization's settings and edge ingest: refused; on theirs: their own, empty.
        await expectStatus(await t.http('GET', '/organizations/allowed-origins', { key: other.apiKey }), 403);
        await expectStatus(
          await t.http('PUT', '/organizations/allowed-origins', {
            key: other.apiKey,
            body: { allowed_origins: ['https://evil.example'] },
          }),
          403,
        );
        const edgeSample = eventDefinition('MitmAttackDetected_v1')!.sample({
          orgId: t.org.id,
          now: Date.now(),
        });
        await expectStatus(
          await t.http('POST', '/edge/events', {
            key: other.apiKey,
            body: { event_name: 'MitmAttackDetected_v1', ...edgeSample },
          }),
          403,
        );
        const listed = await t.http('GET', '/organizations/allowed-origins', theirs);
        await expectStatus(listed, 200);
        expect(listed.json.result).toEqual({ allowed_origins: [] });
        const mine = await t.http('GET', '/organizations/allowed-origins');
        expect(mine.json.result).toEqual({ allowed_origins: [APP] });

        // Their own events go to their webhooks (they have none), never to ours.
        const published = await t.http('POST', '/edge/events', {
          ...theirs,
          body: { event_name: 'MitmAttackDetected_v1', ...edgeSample },
        });
        await expectStatus(published, 202);
        const marker = await sdkEvents({ event_name: 'ServiceSDKLoaded_v1' });
        await arrived(marker.json.result.event_ids);
        await Bun.sleep(200);
        await collect();
        const theirsArrived = [...delivered.values()]
          .slice(before)
          .filter(
            (d) => (d.event.event_metadata as { organization_id: string }).organization_id !== t.org.id,
          );
        expect(theirsArrived).toEqual([]);
        expect(decodeJwt(token).oid).toBe(t.org.id);
      });
    });
  });
}
