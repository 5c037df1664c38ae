import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { isUuid } from '../../../core/ids.ts';
import { createWebhookVerifier } from '../../../plugins/webhooks/receiver.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  createPerson,
  customClaims,
  identityPlugins,
  issueToken,
  signIn,
} from '../../helpers/identity-service.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { startWebhookService, until, type WebhookTestService } from '../../helpers/webhooks.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('the token_minted sync hook', () => {
  let t: WebhookTestService;
  const receivers: HttpsReceiver[] = [];
  let n = 0;

  beforeAll(async () => {
    t = await startWebhookService({ plugins: identityPlugins(), env: { LOG_LEVEL: 'error' } });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await t.stop();
  });

  /** A receiver that also notes when each request arrived (performance.now()). */
  function receiver(handler: (i: number) => Response | Promise<Response>) {
    const at: number[] = [];
    const rx = startHttpsReceiver(() => {
      at.push(performance.now());
      return handler(at.length - 1);
    });
    receivers.push(rx);
    return Object.assign(rx, { at });
  }

  /** A fresh organization, so each test sees only its own webhooks. */
  async function org() {
    const { organization, apiKey } = await t.service.ctx.orgs.create(`Org ${++n}`);
    const as: CallOptions = { orgId: organization.id, key: apiKey };
    const call = (method: string, path: string, o: CallOptions = {}) => t.call(method, path, { ...as, ...o });
    /** A webhook on `rx` with the token_minted trigger. */
    async function hook(rx: HttpsReceiver, extra: Record<string, unknown> = {}) {
      const target = rx.url(`/mint-${++n}`, 'b.hooks.test');
      const r = await call('POST', '/organizations/webhooks', {
        body: { name: `hook ${n}`, target_url: target, ...extra },
      });
      await expectStatus(r, 201);
      const id: string = r.json.result.id;
      const tr = await call('POST', `/organizations/webhooks/${id}/triggers`, {
        body: { trigger_type: 'sync_hook', trigger_name: 'token_minted' },
      });
      await expectStatus(tr, 201);
      return { id, target };
    }
    const issue = () => issueToken(t, as);
    /** A person ready to sign in, so that a timed sign-in measures the sign-in alone. */
    const ready = async () => {
      const person = await createPerson(t, as);
      return () => signIn(t, person, as);
    };
    return { id: organization.id, call, hook, issue, ready };
  }

  it('adds the claims of a 2xx JSON object; the receiver helper verifies the signed request', async () => {
    const o = await org();
    const rx = receiver(() => json({ plan: 'pro', limits: { seats: 5 } }));
    const { id, target } = await o.hook(rx, { custom_headers: { 'X-Secret': ['s3cr3t'] } });
    const res = await o.issue();
    await expectStatus(res, 200);
    expect(customClaims(res.claims!)).toEqual({ plan: 'pro', limits: { seats: 5 } });

    expect(rx.requests).toHaveLength(1);
    const req = rx.requests[0]!;
    expect(req.headers.get('content-type')).toBe('application/jwt');
    expect(req.headers.get('x-secret')).toBe('s3cr3t');
    const verifier = createWebhookVerifier({ baseUrl: t.baseUrl, orgId: o.id });
    const { claims } = await verifier.verify(
      { body: req.body, url: target },
      { webhookId: id, triggerType: 'sync_hook', triggerName: 'token_minted' },
    );
    expect(claims.exp).toBe(claims.iat + 300);
    expect(claims.aud).toBe(o.id);
    expect(claims.iss).toBe(t.baseUrl);
    expect(isUuid(claims.sub)).toBe(true);
    expect(claims.trigger_content).toEqual({
      aud: o.id,
      iss: t.baseUrl,
      sub: res.json.result.person_id,
      region: 'us-iowa',
      first_token: true,
      groups_claim_name: 'groups',
      authentications: [
        {
          handle: { type: 'username', value: expect.any(String) },
          method: 'password',
          timestamp: expect.any(String),
        },
      ],
      request_metadata: { client_ip_address: '', origin: '', user_agent: '' },
    });
  });

  it('adds a claim named __proto__ as a claim', async () => {
    const o = await org();
    // Raw JSON: JSON.stringify of an object literal would leave the member out.
    const rx = receiver(
      () =>
        new Response('{"__proto__":{"x":1},"plan":"pro"}', {
          headers: { 'content-type': 'application/json' },
        }),
    );
    await o.hook(rx);
    const res = await o.issue();
    await expectStatus(res, 200);
    expect(Object.hasOwn(res.claims!, '__proto__')).toBe(true);
    expect(JSON.stringify(customClaims(res.claims!))).toBe('{"__proto__":{"x":1},"plan":"pro"}');
  });

  it('leaves the token unchanged for {} and for an empty body', async () => {
    const o = await org();
    await o.hook(receiver(() => json({})));
    await o.hook(receiver(() => new Response(null, { status: 204 })));
    const res = await o.issue();
    await expectStatus(res, 200);
    expect(customClaims(res.claims!)).toEqual({});
  });

  it('blocks after exactly three attempts at least 100 ms apart when the receiver answers 403', async () => {
    const o = await org();
    const rx = receiver(() => new Response('no', { status: 403 }));
    const { id } = await o.hook(rx);
    const res = await o.issue();
    await expectStatus(res, 403);
    expect(res.json.errors[0].message).toContain(`webhook ${id}`);
    expect(res.json.errors[0].message).toContain('failed after 3 attempts (it answered 403)');
    expect(rx.at).toHaveLength(3);
    expect(rx.at[1]! - rx.at[0]!).toBeGreaterThanOrEqual(99);
    expect(rx.at[2]! - rx.at[1]!).toBeGreaterThanOrEqual(99);
    // Each attempt is signed afresh: three jti.
    expect(new Set(rx.requests.map((q) => q.body)).size).toBe(3);
  });

  it('blocks a receiver that sleeps 3 s within the 2 s timeout of each of its three attempts', async () => {
    const o = await org();
    const rx = receiver(async () => {
      await sleep(3000);
      return json({ late: true });
    });
    await o.hook(rx);
    const issue = await o.ready();
    const start = performance.now();
    const res = await issue();
    const took = performance.now() - start;
    await expectStatus(res, 403);
    expect(res.json.errors[0].message).toContain('timeout');
    expect(rx.at).toHaveLength(3);
    // 3 x 2 s + 2 x 100 ms, and not much more.
    expect(took).toBeGreaterThanOrEqual(6000);
    expect(took).toBeLessThan(7000);
  }, 20_000);

  it('stops at the overall deadline however many attempts remain', async () => {
    const s = await startWebhookService({
      plugins: identityPlugins(),
      options: { tokenMintedDeadlineMs: 700 },
    });
    try {
      const rx = receiver(async () => {
        await sleep(3000);
        return json({});
      });
      const r = await s.call('POST', '/organizations/webhooks', {
        body: { name: 'slow', target_url: rx.url('/deadline', 'c.hooks.test'), timeout: '500ms' },
      });
      await expectStatus(r, 201);
      await expectStatus(
        await s.call('POST', `/organizations/webhooks/${r.json.result.id}/triggers`, {
          body: { trigger_type: 'sync_hook', trigger_name: 'token_minted' },
        }),
        201,
      );
      const person = await createPerson(s);
      const start = performance.now();
      await expectStatus(await signIn(s, person), 403);
      const took = performance.now() - start;
      expect(rx.at).toHaveLength(2); // 500 ms, 100 ms wait, then the 100 ms left
      expect(took).toBeLessThan(1000);
    } finally {
      await s.stop();
    }
  });

  it('succeeds when the first attempt times out and the second answers at once', async () => {
    const o = await org();
    const rx = receiver(async (i) => {
      if (i === 0) await sleep(2500);
      return json({ second: i });
    });
    await o.hook(rx);
    const res = await o.issue();
    await expectStatus(res, 200);
    expect(res.claims!.second).toBe(1);
    expect(rx.at).toHaveLength(2);
  });

  it('blocks a registered, a reserved or the groups claim, naming it', async () => {
    for (const [body, claim, kind] of [
      [{ ok: 1, exp: 1 }, 'exp', 'registered'],
      [{ oid: 'x' }, 'oid', 'reserved'],
      [{ authenticated_methods: ['x'] }, 'authenticated_methods', 'reserved'],
      [{ groups: ['admin'] }, 'groups', 'reserved'],
      [{ 'identity-service': true }, 'identity-service', 'reserved'],
      // The deployment's own claim (HEADER_PREFIX in lower case), which the issuer alone knows of.
      [{ service: 'x' }, 'service', 'reserved'],
    ] as const) {
      const o = await org();
      const { id } = await o.hook(receiver(() => json(body)));
      const res = await o.issue();
      await expectStatus(res, 403);
      expect(res.json.errors[0].message).toBe(
        `the token_minted webhook ${id} blocked the token: it tried to set the ${kind} claim "${claim}"`,
      );
    }
  });

  it('blocks a 2xx body that is not a JSON object, after one attempt', async () => {
    for (const [body, why] of [
      ['[1,2]', 'it answered an array, not a JSON object'],
      ['"text"', 'it answered a string, not a JSON object'],
      ['null', 'it answered null, not a JSON object'],
      ['ok', 'it answered a body that is not JSON'],
    ] as const) {
      const o = await org();
      const rx = receiver(() => new Response(body));
      await o.hook(rx);
      const res = await o.issue();
      await expectStatus(res, 403);
      expect(res.json.errors[0].message).toEndWith(why);
      expect(rx.at).toHaveLength(1);
    }
  });

  it('calls two webhooks at once and merges in creation order, the later winning', async () => {
    const o = await org();
    await o.hook(receiver(() => sleep(600).then(() => json({ a: 1, both: 'first' }))));
    await o.hook(receiver(() => sleep(600).then(() => json({ b: 2, both: 'second' }))));
    const issue = await o.ready();
    const start = performance.now();
    const res = await issue();
    const took = performance.now() - start;
    await expectStatus(res, 200);
    expect(customClaims(res.claims!)).toEqual({ a: 1, b: 2, both: 'second' });
    // One call's time and the sign-in's (half a second of room on a loaded machine), not two calls'.
    expect(took).toBeLessThan(1100);
  });

  it("records every call in the webhook's delivery log with its attempts", async () => {
    const o = await org();
    const failing = await o.hook(receiver(() => new Response('nope', { status: 503 })));
    const fine = await o.hook(receiver(() => json({ x: 1 })));
    await expectStatus(await o.issue(), 403);
    const deliveries = async (id: string) =>
      (await o.call('GET', `/organizations/webhooks/${id}/deliveries`)).json.result;
    await until(async () => (await deliveries(failing.id)).length === 1, 5000, 'the failed call recorded');
    await until(async () => (await deliveries(fine.id)).length === 1, 5000, 'the good call recorded');

    const [bad] = await deliveries(failing.id);
    expect(bad).toMatchObject({
      trigger_type: 'sync_hook',
      trigger_name: 'token_minted',
      status: 'dropped',
      attempt_count: 3,
      last_status_code: 503,
    });
    expect(bad.last_error).toContain('failed after 3 attempts');
    expect(bad.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(['retry', 'retry', 'dropped']);
    for (const a of bad.attempts) {
      expect(a).toMatchObject({ status_code: 503, error_kind: 'http_status', ok: false });
      expect(a.latency_ms).toBeGreaterThanOrEqual(0);
    }
    const [good] = await deliveries(fine.id);
    expect(good).toMatchObject({ status: 'succeeded', attempt_count: 1, last_status_code: 200 });
    expect(good.attempts[0]).toMatchObject({ ok: true, outcome: 'succeeded', response: '{"x":1}' });
    // A sync hook call answered its sign-in: there is nothing to resend.
    const resend = await o.call('POST', `/organizations/webhooks/${failing.id}/deliveries/${bad.id}/resend`);
    await expectStatus(resend, 409);
  });

  it("never calls another organization's token_minted webhooks", async () => {
    const mine = await org();
    const other = await org();
    const theirs = receiver(() => json({ leaked: true }));
    await other.hook(theirs);
    const res = await mine.issue();
    await expectStatus(res, 200);
    expect(customClaims(res.claims!)).toEqual({});
    expect(theirs.requests).toHaveLength(0);
    await expectStatus(await other.issue(), 200);
    expect(theirs.requests).toHaveLength(1);
  });
});
