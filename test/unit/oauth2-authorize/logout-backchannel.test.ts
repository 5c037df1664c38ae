import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { deliveryEnv, until } from '../../helpers/webhooks.ts';
import {
  type AuthorizeService,
  exchange,
  type MadeClient,
  obtainCode,
  startAuthorizeService,
} from './fixture.ts';
import { sessionMaker } from './session-fixture.ts';

let s: AuthorizeService;
let sessions: ReturnType<typeof sessionMaker>;
let rx: HttpsReceiver;
/** Two clients taking logout tokens (on one receiver, each its path), and one that takes none. */
let told: MadeClient;
let alsoTold: MadeClient;
let silent: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService({ env: deliveryEnv() });
  sessions = sessionMaker(s, s.service.ctx.clock);
  rx = startHttpsReceiver(() => new Response(null, { status: 200 }));
  told = await s.createClient({
    post_logout_redirect_uris: ['http://127.0.0.1:9/bye'],
    backchannel_logout_uri: rx.url('/told', 'a.hooks.test'),
  });
  alsoTold = await s.createClient({ backchannel_logout_uri: rx.url('/also-told', 'b.hooks.test') });
  silent = await s.createClient();
});
afterAll(async () => {
  await rx.stop();
  await s.stop();
});

/** A received logout token, verified as its client would verify it. */
async function logoutToken(path: string, client: MadeClient): Promise<JWTPayload> {
  const got = rx.requests.find((r) => r.path === path);
  if (!got) throw new Error(`nothing received at ${path}`);
  const token = new URLSearchParams(got.body).get('logout_token') ?? '';
  const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${s.url}/.well-known/jwks.json`)), {
    issuer: s.url,
    audience: client.client_id,
    typ: 'logout+jwt',
  });
  return payload;
}

/** The logout tokens received for a session, by client path. */
const receivedFor = async (sessionId: string) => {
  const paths: string[] = [];
  for (const r of rx.requests) {
    const token = new URLSearchParams(r.body).get('logout_token') ?? '';
    const sid = JSON.parse(atob(token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))).sid;
    if (sid === sessionId) paths.push(r.path);
  }
  return paths.sort();
};

describe('back-channel logout when a session ends', () => {
  it('RP-initiated logout tells each client of the session that takes logout tokens, and no other', async () => {
    const person = await s.person();
    const { code, verifier } = await obtainCode(s, told, {}, person);
    const tokens = await exchange(s, told, code, verifier);
    await expectStatus(tokens, 200);
    // The session served the two clients that take logout tokens and one that does not; a fourth
    // client, never signed in to, takes them too but hears nothing.
    const never = await s.createClient({ backchannel_logout_uri: rx.url('/never', 'c.hooks.test') });
    const { session, cookie } = await sessions.start(person.personId, {
      clients: [told.client_id, alsoTold.client_id, silent.client_id],
    });
    const res = await fetch(
      `${s.url}/oauth2/logout?${new URLSearchParams({
        id_token_hint: String(tokens.json.id_token),
        post_logout_redirect_uri: 'http://127.0.0.1:9/bye',
      })}`,
      { redirect: 'manual', headers: { cookie } },
    );
    await expectStatus(res, 303);
    await until(async () => (await receivedFor(session.sessionId)).length >= 2, 10_000, 'two logout tokens');
    expect(await receivedFor(session.sessionId)).toEqual(['/also-told', '/told']);
    const payload = await logoutToken('/told', told);
    expect(payload).toMatchObject({ sub: person.personId, sid: session.sessionId, oid: s.org.id });
    expect(rx.requests.some((r) => r.path === '/never')).toBe(false);
    expect(never.client_id).not.toBe(told.client_id);
  });

  it("ending a person's sessions by the API tells the clients of each", async () => {
    const person = await s.person();
    const a = await sessions.start(person.personId, { clients: [alsoTold.client_id] });
    const b = await sessions.start(person.personId, { clients: [alsoTold.client_id, silent.client_id] });
    await expectStatus(await s.call('DELETE', `/persons/${person.personId}/sessions`), 204);
    await until(
      async () =>
        (await receivedFor(a.session.sessionId)).length + (await receivedFor(b.session.sessionId)).length >=
        2,
      10_000,
      'a logout token per session',
    );
    expect(await receivedFor(a.session.sessionId)).toEqual(['/also-told']);
    expect(await receivedFor(b.session.sessionId)).toEqual(['/also-told']);
  });

  it('disabling the person tells them too', async () => {
    const person = await s.person();
    const a = await sessions.start(person.personId, { clients: [told.client_id] });
    await expectStatus(
      await s.call('PATCH', `/persons/${person.personId}`, { body: { active: false } }),
      200,
    );
    await until(async () => (await receivedFor(a.session.sessionId)).length >= 1, 10_000, 'the logout token');
    expect(await receivedFor(a.session.sessionId)).toEqual(['/told']);
  });
});
