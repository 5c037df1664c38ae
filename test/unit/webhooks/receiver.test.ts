import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import {
  createWebhookVerifier,
  verifyWebhookRequest,
  type WebhookVerificationCode,
  WebhookVerificationError,
} from '../../../plugins/webhooks/receiver.ts';
import { startWebhookService, type WebhookTestService } from '../../helpers/webhooks.ts';

let t: WebhookTestService;
beforeAll(async () => {
  t = await startWebhookService();
});
afterAll(async () => {
  await t.stop();
});

const target = 'https://a.hooks.test/receiver';
const webhookId = '01900000-0000-7000-8000-00000000000a';

function claims(overrides: Record<string, unknown> = {}) {
  const iat = Math.floor(Date.now() / 1000);
  return {
    jti: crypto.randomUUID(),
    aud: t.org.id,
    sub: crypto.randomUUID(),
    iss: t.baseUrl,
    iat,
    exp: iat + 300,
    webhook_id: webhookId,
    target_url: target,
    trigger_type: 'event',
    trigger_name: 'PersonCreated_v1',
    trigger_content: { event_metadata: { event_name: 'PersonCreated_v1' } },
    ...overrides,
  };
}
const signed = (overrides: Record<string, unknown> = {}) =>
  t.service.ctx.signer.sign(t.org.id, claims(overrides));

async function codeOf(promise: Promise<unknown>): Promise<WebhookVerificationCode | 'ok'> {
  try {
    await promise;
    return 'ok';
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.code;
    throw e;
  }
}

describe('the receiver helper', () => {
  it('accepts a request signed by the service and answers its claims and event', async () => {
    const verifier = createWebhookVerifier({ baseUrl: t.baseUrl, orgId: t.org.id });
    const body = await signed();
    const request = new Request(target, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/jwt' },
    });
    const { claims: c, event } = await verifier.verify(request, {
      webhookId,
      triggerType: 'event',
      triggerName: 'PersonCreated_v1',
    });
    expect(c.aud).toBe(t.org.id);
    expect(event).toEqual({ event_metadata: { event_name: 'PersonCreated_v1' } });
  });

  it('runs each of the six checks, with a stable code for each failure', async () => {
    const verifier = createWebhookVerifier({ baseUrl: t.baseUrl, orgId: t.org.id });
    const check = async (body: string | Promise<string>, expected = {}, url = target) =>
      codeOf(verifier.verify({ body: await body, url }, expected));

    // 1. The signature, by the key the header names.
    const foreign = await generateKeyPair('ES256');
    const forged = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'ES256', kid: (await exportJWK(foreign.publicKey)).x })
      .sign(foreign.privateKey);
    expect(await check(forged)).toBe('ERR_WEBHOOK_SIGNATURE');
    const real = await signed();
    const [h, p, s] = real.split('.');
    const tampered = `${h}.${btoa(JSON.stringify({ ...claims(), sub: 'someone-else' })).replace(/=+$/, '')}.${s}`;
    expect(await check(tampered)).toBe('ERR_WEBHOOK_SIGNATURE');
    expect(await check(`${h}.${p}`)).toBe('ERR_WEBHOOK_MALFORMED');
    expect(await check('not a jwt')).toBe('ERR_WEBHOOK_MALFORMED');
    // 2. The expiry.
    const past = Math.floor(Date.now() / 1000) - 600;
    expect(await check(signed({ iat: past, exp: past + 300 }))).toBe('ERR_WEBHOOK_EXPIRED');
    // 3. The audience, 4. the issuer.
    expect(await check(signed({ aud: crypto.randomUUID() }))).toBe('ERR_WEBHOOK_AUDIENCE');
    expect(await check(signed({ iss: 'https://evil.example' }))).toBe('ERR_WEBHOOK_ISSUER');
    // 5. The URL that received it.
    expect(await check(signed(), {}, 'https://b.hooks.test/receiver')).toBe('ERR_WEBHOOK_TARGET_URL');
    expect(await check(signed(), {}, 'https://A.HOOKS.TEST:443/receiver')).toBe('ok');
    // 6. Optionally the webhook and the trigger.
    expect(await check(signed(), { webhookId: crypto.randomUUID() })).toBe('ERR_WEBHOOK_ID');
    expect(await check(signed(), { triggerName: 'PersonDeleted_v1' })).toBe('ERR_WEBHOOK_TRIGGER');
    expect(await check(signed(), { triggerType: 'sync_hook' })).toBe('ERR_WEBHOOK_TRIGGER');
  });

  it('takes both spellings of the MITM trigger as one, and no other made-up alias', async () => {
    const verifier = createWebhookVerifier({ baseUrl: t.baseUrl, orgId: t.org.id });
    const check = async (sent: string, expected: string) =>
      codeOf(
        verifier.verify(
          { body: await signed({ trigger_name: sent }), url: target },
          { triggerName: expected },
        ),
      );
    for (const expected of ['MitmAttackDetectedV1', 'MitmAttackDetected_v1']) {
      expect(await check('MitmAttackDetected_v1', expected)).toBe('ok');
      expect(await check('MitmAttackDetectedV1', expected)).toBe('ok');
    }
    expect(await check('PersonCreated_v1', 'PersonCreatedV1')).toBe('ERR_WEBHOOK_TRIGGER');
    expect(await check('MitmAttackDetected_v1', 'PersonCreated_v1')).toBe('ERR_WEBHOOK_TRIGGER');
  });

  it('says when the key set cannot be fetched', async () => {
    const verifier = createWebhookVerifier({ baseUrl: 'http://127.0.0.1:9', orgId: t.org.id });
    expect(
      await codeOf(verifier.verify({ body: await signed({ iss: 'http://127.0.0.1:9' }), url: target })),
    ).toBe('ERR_WEBHOOK_KEYS_UNAVAILABLE');
    const wrongOrg = createWebhookVerifier({ baseUrl: t.baseUrl, orgId: crypto.randomUUID() });
    expect(await codeOf(wrongOrg.verify({ body: await signed(), url: target }))).toBe(
      'ERR_WEBHOOK_KEYS_UNAVAILABLE',
    );
  });

  it('fetches the key set once for many verifications (it is rate-limited)', async () => {
    let fetches = 0;
    const counting = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch(request) {
        fetches++;
        return t.service.fetch(new Request(`${t.baseUrl}${new URL(request.url).pathname}`, request));
      },
    });
    try {
      const jwksUrl = `http://127.0.0.1:${counting.port}/organizations/webhooks/verification-jwks`;
      for (let i = 0; i < 20; i++)
        await verifyWebhookRequest(
          { body: await signed(), url: target },
          { baseUrl: t.baseUrl, orgId: t.org.id, jwksUrl },
        );
      expect(fetches).toBe(1);
    } finally {
      await counting.stop(true);
    }
  });
});
