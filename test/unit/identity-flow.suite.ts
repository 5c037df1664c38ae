import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createWebhookVerifier, type WebhookVerifier } from 'identity-service/receiver';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { expectStatus } from '../helpers/expect-status.ts';
import { createPerson, type IdentityTestService, signIn } from '../helpers/identity-service.ts';
import type { CallOptions } from '../helpers/service.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../helpers/tls.ts';
import { until } from '../helpers/webhooks.ts';

// The identity plugins together (persons, tokens, password, webhooks), over a loopback port, with
// real HTTPS receivers: one token_minted hook and one event webhook subscribed to every event of the flow.

const EVENTS = [
  'PersonCreated_v1',
  'PasswordChanged_v1',
  'AuthenticationSucceeded_v1',
  'AuthenticationFailed_v1',
  'TokenMinted_v1',
  'AnonymousPersonCreated_v1',
  'AnonymousTokenMinted_v1',
  'PersonDeleted_v1',
];
const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const FROM = { 'x-forwarded-for': '198.51.100.23', 'user-agent': 'FlowTest/1.0' };

/**
 * The identity flow end to end, on whatever storage and bus `start` gives: persons, tokens, password and
 * webhooks together, with a token_minted hook and an event webhook on real HTTPS receivers.
 */
export function identityFlowSuite(label: string, start: () => Promise<IdentityTestService>) {
  describe(label, () => {
    let t: IdentityTestService;
    let hookRx: HttpsReceiver;
    let eventRx: HttpsReceiver;
    let hookTarget: string;
    let eventTarget: string;
    let receiver: WebhookVerifier;
    let hookAnswer: () => Response = () => json({});
    /** Every event delivered so far, verified with the receiver helper, by event_id. */
    const delivered = new Map<string, { name: string; event: Record<string, unknown> }>();

    async function webhook(target: string, triggers: Array<[string, string]>) {
      const made = await t.http('POST', '/organizations/webhooks', {
        body: { name: target, target_url: target },
      });
      await expectStatus(made, 201);
      for (const [trigger_type, trigger_name] of triggers)
        await expectStatus(
          await t.http('POST', `/organizations/webhooks/${made.json.result.id}/triggers`, {
            body: { trigger_type, trigger_name },
          }),
          201,
        );
    }

    beforeAll(async () => {
      t = await start();
      receiver = createWebhookVerifier({ baseUrl: t.baseUrl, orgId: t.org.id });
      hookRx = startHttpsReceiver(() => hookAnswer());
      eventRx = startHttpsReceiver(() => new Response(null, { status: 204 }));
      hookTarget = hookRx.url('/token-minted', 'b.hooks.test');
      eventTarget = eventRx.url('/events', 'a.hooks.test');
      await webhook(hookTarget, [['sync_hook', 'token_minted']]);
      await webhook(
        eventTarget,
        EVENTS.map((e) => ['event', e]),
      );
    });
    afterAll(async () => {
      await Promise.all([hookRx.stop(), eventRx.stop()]);
      await t.stop();
    });

    /**
     * The events of a person that arrived, verified; waits until `names` (in any order) are all there.
     * With `handleValue`, also the events that name the person by that handle only (a failed sign-in).
     */
    function eventsOf(personId: string, names: string[], handleValue?: string) {
      return eventsWhere(
        (event) =>
          event.person_id === personId ||
          (handleValue !== undefined &&
            (event.handle as { value?: string } | undefined)?.value === handleValue),
        names,
        `for ${personId}`,
      );
    }
    /** The delivered events `which` selects, once those named have arrived (15 s at most). */
    async function eventsWhere(
      which: (event: Record<string, unknown>) => boolean,
      names: string[],
      what: string,
    ) {
      const pick = () => [...delivered.values()].filter((d) => which(d.event));
      await until(
        async () => {
          for (const q of eventRx.requests.splice(0)) {
            const { claims, event } = await receiver.verify({ body: q.body, url: eventTarget });
            expect(claims.trigger_type).toBe('event');
            delivered.set(claims.sub, { name: claims.trigger_name, event });
          }
          const got = pick().map((d) => d.name);
          return names.every((n) => got.filter((g) => g === n).length >= names.filter((x) => x === n).length);
        },
        15_000,
        `${names.join(', ')} ${what}`,
      );
      return pick();
    }
    /** The events of that name, their event_metadata checked and left out. */
    function one(list: Array<{ name: string; event: Record<string, unknown> }>, name: string) {
      return list
        .filter((d) => d.name === name)
        .map(({ event: { event_metadata, ...members } }) => {
          expect(event_metadata).toMatchObject({
            event_name: name,
            organization_id: t.org.id,
            is_test_event: false,
          });
          return members;
        });
    }

    describe('a person signs in with a password', () => {
      it("gets a token that verifies against /.well-known/jwks.json and carries the hook's claims", async () => {
        hookAnswer = () => json({ plan: 'pro', seats: 5 });
        const person = await createPerson({ call: t.http }, {}, ['beta']);
        const calls = hookRx.requests.length;
        const res = await signIn({ call: t.http }, person, { headers: FROM });
        await expectStatus(res, 200);
        expect(res.json.result.person_id).toBe(person.personId);

        const jwks = createRemoteJWKSet(new URL(`${t.baseUrl}/.well-known/jwks.json`));
        const { payload, protectedHeader } = await jwtVerify(res.json.result.token, jwks, {
          issuer: t.baseUrl,
          algorithms: ['ES256'],
        });
        expect(protectedHeader.alg).toBe('ES256');
        expect(payload).toMatchObject({
          sub: person.personId,
          oid: t.org.id,
          person_id: person.personId,
          authenticated_methods: ['password'],
          first_token: true,
          groups: ['beta'],
          plan: 'pro',
          seats: 5,
        });
        const discovery = await t.http('GET', '/.well-known/openid-configuration', {
          key: null,
          orgId: null,
        });
        expect(discovery.json).toMatchObject({
          issuer: t.baseUrl,
          jwks_uri: `${t.baseUrl}/.well-known/jwks.json`,
        });

        expect(hookRx.requests.length).toBe(calls + 1);
        const { claims } = await receiver.verify(
          { body: hookRx.requests.at(-1)!.body, url: hookTarget },
          { triggerType: 'sync_hook', triggerName: 'token_minted' },
        );
        expect(claims.trigger_type).toBe('sync_hook');
        expect(claims.trigger_content).toEqual({
          aud: t.org.id,
          iss: t.baseUrl,
          sub: person.personId,
          region: 'us-iowa',
          first_token: true,
          groups_claim_name: 'groups',
          authentications: [{ handle: person.handle, method: 'password', timestamp: expect.any(String) }],
          request_metadata: { client_ip_address: '198.51.100.23', origin: '', user_agent: 'FlowTest/1.0' },
        });
        hookAnswer = () => json({});
      });

      it('fails with 403 when the token_minted receiver answers 403, and AuthenticationFailed_v1 says why', async () => {
        const person = await createPerson({ call: t.http });
        hookAnswer = () => new Response('no', { status: 403 });
        const calls = hookRx.requests.length;
        try {
          const res = await signIn({ call: t.http }, person);
          await expectStatus(res, 403);
          expect(res.json.errors[0].message).toContain('failed after 3 attempts (it answered 403)');
        } finally {
          hookAnswer = () => json({});
        }
        expect(hookRx.requests.length).toBe(calls + 3);
        const events = await eventsOf(person.personId, ['AuthenticationFailed_v1']);
        expect(one(events, 'AuthenticationFailed_v1')[0]).toMatchObject({
          failed_authn_method: 'password',
          failure_reason: 'token_blocked',
          failure_detail: expect.stringContaining('failed after 3 attempts'),
          handle: { type: 3, value: person.handle.value },
        });
        expect(one(events, 'AuthenticationSucceeded_v1')).toEqual([]);
        expect(one(events, 'TokenMinted_v1')).toEqual([]);
      });
    });

    describe('a sign-up the token_minted hook blocks', () => {
      it('leaves no anonymous person, publishes nothing for it, and says AuthenticationFailed_v1', async () => {
        hookAnswer = () => new Response('no', { status: 403 });
        const calls = hookRx.requests.length;
        try {
          await expectStatus(await t.http('POST', '/persons/anonymous', { key: null }), 403);
        } finally {
          hookAnswer = () => json({});
        }
        expect(hookRx.requests.length).toBeGreaterThan(calls);
        // The hook was shown the person the sign-up would have made.
        const { claims } = await receiver.verify(
          { body: hookRx.requests.at(-1)!.body, url: hookTarget },
          { triggerType: 'sync_hook', triggerName: 'token_minted' },
        );
        const refused = (claims.trigger_content as { sub: string }).sub;
        expect(refused).toMatch(/^[0-9a-f-]{36}$/);
        await expectStatus(await t.http('GET', `/persons/${refused}`), 404);
        // The registration failed, as docs/api-contract.md says of a blocked issuance; it names no person.
        const failed = await eventsWhere(
          (e) => e.failed_authn_method === 'anonymous',
          ['AuthenticationFailed_v1'],
          'of the blocked sign-up',
        );
        expect(one(failed, 'AuthenticationFailed_v1')[0]).toEqual({
          analytics_metadata: expect.any(Object),
          failed_authn_method: 'anonymous',
          failure_reason: 'token_blocked',
          failure_detail: expect.stringContaining('blocked the token'),
        });

        // An allowed sign-up is stored and announced; by the time its events arrive (and a moment more),
        // none came for the refused one.
        const allowed = await t.http('POST', '/persons/anonymous', { key: null });
        await expectStatus(allowed, 201);
        await eventsOf(allowed.json.result.person_id, [
          'AnonymousPersonCreated_v1',
          'AnonymousTokenMinted_v1',
        ]);
        await expectStatus(await t.http('GET', `/persons/${allowed.json.result.person_id}`), 200);
        await new Promise((r) => setTimeout(r, 300));
        expect((await eventsOf(refused, [])).map((d) => d.name)).toEqual([]);
      });
    });

    describe('the events of the flow', () => {
      it('arrive at an event webhook, signed, with the members the spec lists', async () => {
        const person = await createPerson({ call: t.http });
        await expectStatus(await signIn({ call: t.http }, { ...person, password: 'not the password' }), 401);
        await expectStatus(await signIn({ call: t.http }, person, { headers: FROM }), 200);
        await expectStatus(await signIn({ call: t.http }, person), 200);
        const minted = await t.http('POST', `/persons/${person.personId}/mint-token`, {
          body: { custom_claims: { via: 'api' } },
        });
        await expectStatus(minted, 201);
        await expectStatus(await t.http('DELETE', `/persons/${person.personId}`), 204);

        const events = await eventsOf(
          person.personId,
          [
            'PersonCreated_v1',
            'PasswordChanged_v1',
            'AuthenticationFailed_v1',
            'AuthenticationSucceeded_v1',
            'AuthenticationSucceeded_v1',
            'TokenMinted_v1',
            'TokenMinted_v1',
            'TokenMinted_v1',
            'PersonDeleted_v1',
          ],
          person.handle.value,
        );
        const handle = { type: 3, value: person.handle.value };
        const analytics = {
          analytics_correlation_id: expect.any(String),
          client_ip_address: expect.any(String),
        };
        expect(one(events, 'PersonCreated_v1')).toEqual([
          {
            person_id: person.personId,
            region: 'us-iowa',
            handles: [handle],
            gdpr_consents: [],
            analytics_metadata: analytics,
          },
        ]);
        expect(one(events, 'PasswordChanged_v1')[0]).toMatchObject({
          person_id: person.personId,
          region: 'us-iowa',
          handle,
          initiated_by: 1,
        });
        expect(one(events, 'AuthenticationFailed_v1')[0]).toMatchObject({
          failure_reason: 'invalid_credentials',
          handle,
        });
        // The service, not the SDK, reports the failure: source Cloud, so no browser_metadata.
        const failure = events.find((d) => d.name === 'AuthenticationFailed_v1')?.event;
        expect(failure?.event_metadata).toMatchObject({ source: 1 });
        expect(failure).not.toHaveProperty('browser_metadata');
        // Nobody had authenticated: person_id, region, authenticated_methods come only if somebody had.
        for (const member of ['person_id', 'region', 'authenticated_methods'])
          expect(failure).not.toHaveProperty(member);
        expect(one(events, 'AuthenticationSucceeded_v1')[0]).toMatchObject({
          person_id: person.personId,
          region: 'us-iowa',
          success_authn_method: 'password',
          authenticated_methods: ['password'],
          handle,
          analytics_metadata: analytics,
        });
        const tokens = one(events, 'TokenMinted_v1');
        const byApi = tokens.filter((e) => e.mint_token_api === true);
        const bySignIn = tokens.filter((e) => e.mint_token_api === false);
        expect(byApi).toEqual([
          expect.objectContaining({
            first_token: false,
            authentications: [],
            token_id: decodeJwt(minted.json.result).jti,
          }),
        ]);
        expect(bySignIn.map((e) => e.first_token).sort()).toEqual([false, true]);
        for (const e of bySignIn)
          expect(e).toMatchObject({
            person_id: person.personId,
            token_id: expect.any(String),
            issued_at: expect.any(String),
            expires_at: expect.any(String),
            authentications: [{ handle, method: 'password', timestamp: expect.any(String) }],
          });
        expect(
          bySignIn.some(
            (e) =>
              (e.analytics_metadata as { client_ip_address: string }).client_ip_address === '198.51.100.23',
          ),
        ).toBe(true);
        expect(one(events, 'PersonDeleted_v1')).toEqual([
          { person_id: person.personId, region: 'us-iowa', handles: [handle], groups: [] },
        ]);
      });

      it('links a password sign-in to the anonymous person whose token it presents', async () => {
        const anon = await t.http('POST', '/persons/anonymous', { key: null, headers: FROM });
        await expectStatus(anon, 201);
        const anonId: string = anon.json.result.person_id;
        const anonEvents = await eventsOf(anonId, ['AnonymousPersonCreated_v1', 'AnonymousTokenMinted_v1']);
        expect(one(anonEvents, 'AnonymousPersonCreated_v1')[0]).toMatchObject({ region: 'us-iowa' });
        expect(one(anonEvents, 'AnonymousTokenMinted_v1')[0]).toMatchObject({
          mint_token_api: false,
          token_id: decodeJwt(anon.json.result.token).jti,
        });
        // The hook ran for the anonymous person's token too.
        const { claims } = await receiver.verify({ body: hookRx.requests.at(-1)!.body, url: hookTarget });
        expect(claims.trigger_content.sub).toBe(anonId);

        const person = await createPerson({ call: t.http });
        const res = await t.http('POST', '/authenticate/password', {
          key: null,
          body: { handle: person.handle, password: person.password, anonymous_token: anon.json.result.token },
        });
        await expectStatus(res, 200);
        const events = await eventsOf(person.personId, ['TokenMinted_v1']);
        expect(one(events, 'TokenMinted_v1')[0]).toMatchObject({
          prev_anonymous_person_id: anonId,
          first_token: true,
        });
      });
    });

    describe('tokens', () => {
      it('validates a real token, then revokes it; mint-token never calls the token_minted receiver', async () => {
        const person = await createPerson({ call: t.http });
        const res = await signIn({ call: t.http }, person);
        await expectStatus(res, 200);
        const token: string = res.json.result.token;
        const valid = await t.http('POST', '/token/validate', { body: { token } });
        await expectStatus(valid, 200);
        expect(valid.json.result).toMatchObject({ valid: true, expires_in_seconds: expect.any(Number) });
        await expectStatus(await t.http('POST', '/token/revoke', { body: { token } }), 204);
        const revoked = await t.http('POST', '/token/validate', { body: { token } });
        expect(revoked.json.result).toEqual({
          valid: false,
          invalidity_reason: 'invalid_token_content',
          invalidity_detail: 'revoked',
        });

        const calls = hookRx.requests.length;
        const minted = await t.http('POST', `/persons/${person.personId}/mint-token`, {
          body: { custom_claims: { tier: 'gold' } },
        });
        await expectStatus(minted, 201);
        expect(decodeJwt(minted.json.result)).toMatchObject({ authenticated_methods: ['api'], tier: 'gold' });
        const check = await t.http('POST', '/token/validate', { body: { token: minted.json.result } });
        expect(check.json.result.valid).toBe(true);
        await Bun.sleep(100);
        expect(hookRx.requests.length).toBe(calls);
      });
    });

    describe('tenant isolation', () => {
      it("gives a second organization's key 403 or 404 on every identity route, never data", async () => {
        const person = await createPerson({ call: t.http }, {}, ['team']);
        const res = await signIn({ call: t.http }, person);
        await expectStatus(res, 200);
        const token: string = res.json.result.token;
        const other = await t.service.ctx.orgs.create('Other');
        const id = person.personId;
        const routes: Array<[string, string, unknown?]> = [
          ['GET', `/persons/${id}`],
          ['PATCH', `/persons/${id}`, { active: false }],
          ['GET', `/persons/${id}/groups`],
          ['PUT', `/persons/${id}/groups`, { groups: ['x'] }],
          ['POST', '/groups/team/persons', { persons: [id] }],
          ['DELETE', `/groups/team/persons/${id}`],
          ['PUT', `/persons/${id}/credentials/password`, { password: 'a brand new password' }],
          ['POST', `/persons/${id}/mint-token`, {}],
          ['DELETE', `/persons/${id}`],
        ];
        const leaks = (text: string) => text.includes(person.handle.value) || text.includes(token);
        const theirs: CallOptions = { orgId: other.organization.id, key: other.apiKey };
        for (const [method, path, body] of routes) {
          // Their key on our organization: refused before anything is looked up.
          const wrongKey = await t.http(method, path, { body, key: other.apiKey });
          await expectStatus(wrongKey, 403);
          // Their organization, their key, our person: no such person there.
          const res = await t.http(method, path, { body, ...theirs });
          await expectStatus(res, 404);
          expect(leaks(res.text)).toBe(false);
        }
        const members = await t.http('GET', '/groups/team/persons', theirs);
        expect(members.text).not.toContain(id);
        const list = await t.http('GET', `/persons?handle=username:${person.handle.value}`, theirs);
        expect(list.json.result).toEqual([]);
        const validate = await t.http('POST', '/token/validate', { body: { token }, ...theirs });
        await expectStatus(validate, 200);
        expect(validate.json.result).toEqual({
          valid: false,
          invalidity_reason: 'invalid_token_content',
          invalidity_detail: 'wrong_organization',
        });
        const revoke = await t.http('POST', '/token/revoke', { body: { token }, ...theirs });
        await expectStatus(revoke, [400, 403, 404]);
        await expectStatus(
          await t.http('POST', '/token/validate', { body: { token }, key: other.apiKey }),
          403,
        );
        const signInThere = await signIn({ call: t.http }, person, { orgId: other.organization.id });
        await expectStatus(signInThere, 401);

        // Nothing they tried changed our person or our token.
        const mine = await t.http('GET', `/persons/${id}`);
        await expectStatus(mine, 200);
        expect(mine.json.result).toMatchObject({ active: true, groups: ['team'] });
        expect((await t.http('POST', '/token/validate', { body: { token } })).json.result.valid).toBe(true);
        await expectStatus(await signIn({ call: t.http }, person), 200);
      });
    });

    describe('a person ID that is not a UUID', () => {
      it('answers 404 on the routes of other plugins that look a person up, not a 500', async () => {
        for (const [method, path, body] of [
          ['PUT', '/persons/not-a-uuid/credentials/password', { password: 'a brand new password' }],
          ['POST', '/persons/not-a-uuid/mint-token', {}],
        ] as const) {
          const res = await t.http(method, path, { body });
          await expectStatus(res, 404);
          expect(res.json.errors[0].message).toContain('not-a-uuid');
        }
      });
    });
  });
}
