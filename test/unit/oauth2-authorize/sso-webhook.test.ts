import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { webhooks } from '../../../plugins/webhooks/index.ts';
import { createWebhookVerifier } from '../../../plugins/webhooks/receiver.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { deliveryEnv, until } from '../../helpers/webhooks.ts';
import { type SsoLogin, startSsoLogin } from './sso-fixture.ts';

/**
 * The events of an SSO sign-in in the hosted login reach an event webhook: delivered as signed JWTs to
 * an HTTPS receiver on loopback, verified with the receiver helper, with the catalogue's members.
 */
const TRIGGERS = [
  'AuthenticationSucceeded_v1',
  'AuthenticationFailed_v1',
  'TokenMinted_v1',
  'PersonCreated_v1',
];

let f: SsoLogin;
let rx: HttpsReceiver;
let webhookId: string;
let target: string;

beforeAll(async () => {
  f = await startSsoLogin({ env: deliveryEnv(), plugins: [webhooks()], recordEvents: false });
  await f.s.service.start();
  rx = startHttpsReceiver(() => new Response('ok'));
  target = rx.url('/events', 'a.hooks.test');
  const made = await f.s.call('POST', '/organizations/webhooks', {
    body: { name: 'events', target_url: target },
  });
  await expectStatus(made, 201);
  webhookId = made.json.result.id;
  for (const trigger_name of TRIGGERS)
    await expectStatus(
      await f.s.call('POST', `/organizations/webhooks/${webhookId}/triggers`, {
        body: { trigger_type: 'event', trigger_name },
      }),
      201,
    );
});
afterAll(async () => {
  await rx?.stop();
  await f?.stop();
});

/** The events delivered so far, verified, by name. */
async function delivered() {
  const verifier = createWebhookVerifier({ baseUrl: f.s.url, orgId: f.s.org.id });
  const out: Array<{ name: string; event: Record<string, unknown> }> = [];
  for (const req of rx.requests) {
    const { claims, event } = await verifier.verify({ body: req.body, url: target }, { webhookId });
    out.push({ name: claims.trigger_name, event });
  }
  return out;
}

describe('the events of an SSO sign-in in the hosted login', () => {
  it('reach an event webhook with the members the catalogue gives them', async () => {
    f.op.state.decision = { sub: 'kai-at-acme', email: 'kai@acme.example', email_verified: true };
    const a = await f.begin();
    const ok = await f.signIn(a);
    await expectStatus(ok.res, 303);
    const { claims } = await f.redeem(a, new URL(ok.res.headers.get('location')!));
    f.op.state.decision = { sub: 'lia-at-acme', email: 'lia@acme.example', email_verified: false };
    const refused = await f.signIn(await f.begin());
    await expectStatus(refused.res, 400);

    await until(() => rx.requests.length >= 4, 15_000, 'four deliveries');
    const events = await delivered();
    const named = (name: string) => events.filter((e) => e.name === name).map((e) => e.event);
    expect(named('PersonCreated_v1')).toEqual([expect.objectContaining({ person_id: claims.sub })]);
    const [succeeded] = named('AuthenticationSucceeded_v1');
    expect(succeeded).toMatchObject({
      person_id: claims.sub,
      success_authn_method: 'oidc',
      authenticated_methods: ['oidc'],
      analytics_metadata: expect.objectContaining({ analytics_correlation_id: expect.any(String) }),
      browser_metadata: expect.any(Object),
    });
    expect(succeeded).not.toHaveProperty('handle');
    const minted = named('TokenMinted_v1');
    expect(minted).toEqual([expect.objectContaining({ person_id: claims.sub })]);
    // AuthenticationDetails has a handle only for factor methods that allow one; SSO has none.
    expect(minted[0]?.authentications).toEqual([{ method: 'oidc', timestamp: expect.any(String) }]);
    const failed = named('AuthenticationFailed_v1');
    expect(failed).toEqual([
      expect.objectContaining({ failed_authn_method: 'oidc', failure_reason: 'unverified_email' }),
    ]);
    // Reported by the service (source Cloud): browser_metadata is the SDK's, "when from the SDK".
    expect(failed[0]?.event_metadata).toMatchObject({ source: 1 });
    expect(failed[0]).not.toHaveProperty('browser_metadata');
  }, 60_000);
});
