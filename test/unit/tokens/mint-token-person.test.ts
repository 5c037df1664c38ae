import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import { expectStatus } from '../../helpers/expect-status.ts';
import { passwordService } from '../password/fixture.ts';

type Svc = Awaited<ReturnType<typeof passwordService>>;
let s: Svc;
beforeAll(async () => {
  s = await passwordService();
});
afterAll(() => s.stop());

const GOOD = 'correct horse battery staple';

/** The event whose token_id is the token's jti, of either kind, waiting up to 5 s for it. */
async function eventOf(token: string) {
  const jti = decodeJwt(token).jti;
  const deadline = Date.now() + 5000;
  const find = () => s.events.find((e) => e.token_id === jti);
  while (!find() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return find();
}

describe('POST /persons/{person_id}/mint-token and the person it mints for', () => {
  it('refuses a disabled person with 400, publishing no TokenMinted_v1, and mints again once enabled', async () => {
    const person = await s.addPerson([{ type: 'username', value: 'disabled-mint' }]);
    const path = `/persons/${person.personId}`;
    await expectStatus(await s.call('PATCH', path, { body: { active: false } }), 200);
    const before = s.events.length;
    const refused = await s.call('POST', `${path}/mint-token`, { body: {} });
    await expectStatus(refused, 400);
    expect(refused.json.errors[0].message).toMatch(/^person_id: .* is disabled and gets no tokens/);
    await expectStatus(await s.call('PATCH', path, { body: { active: true } }), 200);
    const minted = await s.call('POST', `${path}/mint-token`, { body: {} });
    await expectStatus(minted, 201);
    await eventOf(minted.json.result);
    const minting = s.events
      .slice(before)
      .filter((e) => e.event_metadata.event_name === 'TokenMinted_v1' && e.person_id === person.personId);
    expect(minting.map((e) => e.token_id)).toEqual([decodeJwt(minted.json.result).jti]);
  });

  it("publishes AnonymousTokenMinted_v1 with mint_token_api true for an anonymous person's token", async () => {
    const anon = await s.call('POST', '/persons/anonymous', { key: null });
    await expectStatus(anon, 201);
    const res = await s.call('POST', `/persons/${anon.json.result.person_id}/mint-token`, { body: {} });
    await expectStatus(res, 201);
    const event = await eventOf(res.json.result);
    expect(event).toMatchObject({
      event_metadata: { event_name: 'AnonymousTokenMinted_v1' },
      person_id: anon.json.result.person_id,
      mint_token_api: true,
    });
    expect(event).not.toHaveProperty('first_token');
  });

  it("carries first_token false and leaves the person's first token to its first sign-in", async () => {
    const handle = { type: 'email_address' as const, value: 'first@example.com' };
    const person = await s.addPerson([handle]);
    await expectStatus(await s.setPassword(person.personId, { password: GOOD }), 204);
    const minted = await s.call('POST', `/persons/${person.personId}/mint-token`, { body: {} });
    await expectStatus(minted, 201);
    expect(decodeJwt(minted.json.result)).toMatchObject({ first_token: false });
    expect(await eventOf(minted.json.result)).toMatchObject({
      event_metadata: { event_name: 'TokenMinted_v1' },
      mint_token_api: true,
      first_token: false,
    });
    const signedIn = await s.signIn({ handle, password: GOOD });
    await expectStatus(signedIn, 200);
    expect(decodeJwt(signedIn.json.result.token)).toMatchObject({ first_token: true });
    expect(await eventOf(signedIn.json.result.token)).toMatchObject({
      event_metadata: { event_name: 'TokenMinted_v1' },
      mint_token_api: false,
      first_token: true,
    });
    const again = await s.signIn({ handle, password: GOOD });
    await expectStatus(again, 200);
    expect(decodeJwt(again.json.result.token)).toMatchObject({ first_token: false });
  });
});
