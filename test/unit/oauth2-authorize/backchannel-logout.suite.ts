import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose';
import { scaledClock } from '../../../adapters/clock/system.ts';
import { tokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import type { Env } from '../../../core/config.ts';
import { createLogger, type LogFields } from '../../../core/log.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import {
  type BackchannelLogout,
  createBackchannelLogout,
  type LogoutNotice,
} from '../../../plugins/oauth2-authorize/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type HttpsReceiver, IDP_HOST, startHttpsReceiver } from '../../helpers/tls.ts';
import { deliveryEnv, until } from '../../helpers/webhooks.ts';
import {
  type AuthorizeService,
  exchange,
  type MadeClient,
  obtainCode,
  startAuthorizeService,
} from './fixture.ts';

/** How much faster than real time the services run: the 30-minute retry window passes in 6 s. */
const RATE = 300;
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** A service that logs into `lines`, and a sender over its bus (the plugin's own worker delivers). */
export async function startBackchannelService(o: { env: Env; storage?: Storage }) {
  const lines: LogFields[] = [];
  const clock: Clock = scaledClock(RATE);
  const s = await startAuthorizeService({
    clock,
    env: o.env,
    ...(o.storage ? { storage: o.storage } : {}),
    log: createLogger('info', {}, (line) => lines.push(JSON.parse(line))),
  });
  const issuer = s.service.ctx.capability(tokenIssuer);
  if (!issuer) throw new Error('no tokenIssuer in the test service');
  // The logout endpoint calls the plugin's own sender; this one publishes on the same bus and topic.
  const sender: BackchannelLogout = createBackchannelLogout({
    bus: s.service.ctx.bus,
    delivery: s.service.ctx.delivery,
    clock,
    log: createLogger('silent'),
    issuer,
  });
  /** The plugin's log lines about one session's logout tokens. */
  const about = (sessionId: string) => lines.filter((l) => l.session_id === sessionId);
  return { s, clock, sender, about };
}

export type BackchannelService = Awaited<ReturnType<typeof startBackchannelService>>;

/**
 * Back-channel logout delivery end to end, with real HTTPS receivers on loopback: the same body runs on
 * every bus adapter. `start` makes a service with the environment given (and the test hosts' settings).
 */
export function backchannelLogoutSuite(name: string, start: (env: Env) => Promise<BackchannelService>) {
  describe(`back-channel logout delivery: ${name}`, () => {
    let t: BackchannelService;
    let client: MadeClient;
    const receivers: HttpsReceiver[] = [];
    const receiver = (handler: Parameters<typeof startHttpsReceiver>[0]) => {
      const r = startHttpsReceiver(handler);
      receivers.push(r);
      return r;
    };
    const notice = (s: AuthorizeService, uri: string, personId: string): LogoutNotice => ({
      orgId: s.org.id,
      clientId: client.client_id,
      uri,
      personId,
      sessionId: crypto.randomUUID(),
    });
    /** Verifies a received logout token as a client would: the service's JWKS, its issuer, the client as audience. */
    async function verified(s: AuthorizeService, body: string, clock: Clock) {
      const form = new URLSearchParams(body);
      expect([...form.keys()]).toEqual(['logout_token']);
      const jwt = form.get('logout_token')!;
      const { payload, protectedHeader } = await jwtVerify(
        jwt,
        createRemoteJWKSet(new URL(`${s.url}/.well-known/jwks.json`)),
        {
          issuer: s.url,
          audience: client.client_id,
          typ: 'logout+jwt',
          algorithms: ['ES256'],
          currentDate: new Date(clock.now()),
        },
      );
      return { jwt, payload, header: protectedHeader };
    }

    beforeAll(async () => {
      t = await start(deliveryEnv());
      client = await t.s.createClient();
    });
    afterAll(async () => {
      await Promise.all(receivers.map((r) => r.stop()));
      await t.s.stop();
    });

    it('POSTs a form with a logout token signed like the ID tokens, with exactly the spec claims', async () => {
      const { s, clock, sender } = t;
      const { code, verifier } = await obtainCode(s, client);
      const tokens = await exchange(s, client, code, verifier);
      await expectStatus(tokens, 200);
      const idToken = decodeJwt(String(tokens.json.id_token));
      const rx = receiver(() => new Response(null, { status: 200 }));
      const n = notice(s, rx.url('/logout', 'a.hooks.test'), String(idToken.sub));
      await sender.send([n]);
      await until(() => rx.requests.length === 1, 10_000, 'the logout token');

      const req = rx.requests[0]!;
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/logout');
      expect(req.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
      const { jwt, payload, header } = await verified(s, req.body, clock);
      expect(header).toEqual({ alg: 'ES256', typ: 'logout+jwt', kid: decodeProtectedHeader(jwt).kid! });
      // The ID token's issuer, subject and organization: the client matches the logout to its session.
      expect(payload).toEqual({
        iss: idToken.iss!,
        aud: client.client_id,
        sub: idToken.sub!,
        oid: idToken.oid as string,
        sid: n.sessionId,
        iat: expect.any(Number),
        exp: (payload.iat as number) + 120,
        jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
        events: { [EVENT]: {} },
      });
      expect(payload).not.toHaveProperty('nonce');
      expect(idToken.oid).toBe(s.org.id);

      // Signed by the token keys, but no identity token: /token/validate refuses it for its type.
      const check = await s.call('POST', '/token/validate', { body: { token: jwt } });
      await expectStatus(check, 200);
      expect(check.json.result).toMatchObject({ valid: false, invalidity_detail: 'wrong_token_type' });
    });

    it('retries a receiver that answered 500, signing afresh, and is done on its 204', async () => {
      const { s, clock, sender, about } = t;
      const rx = receiver((_, r) => new Response(null, { status: rx.requests.indexOf(r) === 0 ? 500 : 204 }));
      const n = notice(s, rx.url('/retry', 'b.hooks.test'), crypto.randomUUID());
      await sender.send([n]);
      await until(
        () => about(n.sessionId).some((l) => l.msg === 'back-channel logout delivered'),
        10_000,
        'the delivery after a retry',
      );
      expect(rx.requests).toHaveLength(2);
      const [first, second] = await Promise.all(rx.requests.map((r) => verified(s, r.body, clock)));
      const a = first!.payload as JWTPayload;
      const b = second!.payload as JWTPayload;
      expect(b.jti).not.toBe(a.jti);
      // The retry waited its minute on the service's clock.
      expect(b.iat! - a.iat!).toBeGreaterThanOrEqual(60);
      const same = ({ jti: _j, iat: _i, exp: _e, ...rest }: JWTPayload) => rest;
      expect(same(b)).toEqual(same(a));
      expect(about(n.sessionId).map((l) => [l.level, l.msg, l.attempt])).toEqual([
        ['info', 'back-channel logout not accepted; retrying', 1],
        ['info', 'back-channel logout delivered', 2],
      ]);
      expect(about(n.sessionId)[0]).toMatchObject({ reason: 'answered 500; only 2xx is success' });
    });

    it('never follows a redirect: retried until the window ends, then dropped with a warning', async () => {
      const { s, sender, about } = t;
      const rx = receiver((_, r) =>
        r.path === '/moved' ? new Response('ok') : Response.redirect(rx.url('/moved', 'c.hooks.test'), 302),
      );
      const n = notice(s, rx.url('/old', 'c.hooks.test'), crypto.randomUUID());
      await sender.send([n]);
      await until(
        () => about(n.sessionId).some((l) => l.msg === 'back-channel logout dropped'),
        15_000,
        'the drop at the end of the retry window',
      );
      // Attempts 1, 3, 7, 15 and 25 minutes after the first, then none: 35 minutes is past the window.
      expect(rx.requests.map((r) => r.path)).toEqual(Array(6).fill('/old'));
      const dropped = about(n.sessionId).at(-1)!;
      expect(dropped).toMatchObject({
        level: 'warn',
        org_id: s.org.id,
        client_id: client.client_id,
        host: `c.hooks.test:${rx.port}`,
        attempt: 6,
      });
      expect(String(dropped.reason)).toContain('retry window of 30 minutes ended');
      expect(String(dropped.reason)).toContain('answered 302; redirects are not followed');
    });

    it('sends nothing for notices published in a transaction that rolled back', async () => {
      const { s, sender } = t;
      const rx = receiver(() => new Response(null, { status: 200 }));
      const undone = notice(s, rx.url('/undone', 'd.hooks.test'), crypto.randomUUID());
      const kept = notice(s, rx.url('/kept', 'd.hooks.test'), crypto.randomUUID());
      await expect(
        s.service.ctx.storage.transaction(async (tx) => {
          await sender.send([undone], { tx });
          throw new Error('the logout failed after all');
        }),
      ).rejects.toThrow('the logout failed after all');
      await s.service.ctx.storage.transaction((tx) => sender.send([kept], { tx }));
      await until(() => rx.requests.length === 1, 10_000, 'the committed notice');
      expect(rx.requests.map((r) => r.path)).toEqual(['/kept']);
    });
  });

  describe(`back-channel logout to a private address: ${name}`, () => {
    it('is refused without DELIVERY_ALLOW_PRIVATE: dropped at once with a warning, never delivered', async () => {
      // The test hosts map to 127.0.0.1 and the CA is trusted: only the address guard stands in the way.
      const t = await start({});
      const rx = startHttpsReceiver(() => new Response(null, { status: 200 }));
      try {
        const client = await t.s.createClient();
        const n: LogoutNotice = {
          orgId: t.s.org.id,
          clientId: client.client_id,
          uri: rx.url('/logout', IDP_HOST),
          personId: crypto.randomUUID(),
          sessionId: crypto.randomUUID(),
        };
        await t.sender.send([n]);
        await until(() => t.about(n.sessionId).length > 0, 10_000, 'the attempt');
        const [line, ...more] = t.about(n.sessionId);
        expect(line).toMatchObject({
          level: 'warn',
          msg: 'back-channel logout dropped',
          org_id: t.s.org.id,
          client_id: client.client_id,
          host: `${IDP_HOST}:${rx.port}`,
          attempt: 1,
        });
        expect(String(line!.reason)).toMatch(/^the address guard refused the URI \(ssrf_refused: /);
        // A minute and more of the service's clock: no retry, and the receiver never heard of it.
        const waitUntil = t.clock.now() + 90_000;
        await until(() => t.clock.now() > waitUntil, 5_000, 'a minute and a half of the service clock');
        expect(more).toEqual([]);
        expect(t.about(n.sessionId)).toHaveLength(1);
        expect(rx.requests).toEqual([]);
      } finally {
        await rx.stop();
        await t.s.stop();
      }
    });
  });
}
