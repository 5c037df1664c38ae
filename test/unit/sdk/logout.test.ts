import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { TOKEN_KEYS_OWNER } from '../../../core/tokens/token-keys.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { APP, type SdkService, sdkService } from './fixture.ts';

let s: SdkService;
beforeAll(async () => {
  s = await sdkService();
});
afterAll(() => s.stop());

const logout = (token: string | undefined, o: CallOptions = {}) =>
  s.call('POST', '/logout', {
    key: null,
    ...o,
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...o.headers },
  });
const validity = async (token: string) =>
  (await s.call('POST', '/token/validate', { body: { token } })).json.result;
const loggedOut = async (personId: string) =>
  (await s.published('PersonLoggedOut_v1')).filter((e) => e.person_id === personId);

describe('POST /logout', () => {
  it("revokes the person's token and emits PersonLoggedOut_v1 with the body's metadata and the request's", async () => {
    const { personId, token } = await s.personWithToken({}, 'asia-japan');
    const res = await logout(token, {
      body: { analytics_metadata: { analytics_correlation_id: '0192f0c4-0000-7000-8000-00000000abcd' } },
      headers: { 'user-agent': 'LogoutTest/1', origin: APP },
    });
    await expectStatus(res, 204);
    expect(res.text).toBe('');
    expect(await validity(token)).toEqual({
      valid: false,
      invalidity_reason: 'invalid_token_content',
      invalidity_detail: 'revoked',
    });
    const [event] = await loggedOut(personId);
    const { event_metadata, ...members } = event!;
    expect(event_metadata).toMatchObject({
      event_name: 'PersonLoggedOut_v1',
      source: 2,
      organization_id: s.org.id,
    });
    expect(members).toEqual({
      analytics_metadata: {
        analytics_correlation_id: '0192f0c4-0000-7000-8000-00000000abcd',
        // Handed to the app in-process: no address is known.
        client_ip_address: '0.0.0.0',
      },
      browser_metadata: { user_agent: 'LogoutTest/1', window_location: APP, service_sdk_version: '' },
      person_id: personId,
      region: 'asia-japan',
    });
  });

  it('revokes once and reports once when the same token logs out many times at once', async () => {
    const { personId, token } = await s.personWithToken();
    const answers = await Promise.all(Array.from({ length: 6 }, () => logout(token)));
    for (const res of answers) await expectStatus(res, 204);
    expect(await loggedOut(personId)).toHaveLength(1);
    await expectStatus(await logout(token), 204);
    expect(await loggedOut(personId)).toHaveLength(1);
  });

  it('revokes the token of a person deleted since, with no event (there is no region to report)', async () => {
    const { personId, token } = await s.personWithToken();
    await expectStatus(await s.call('DELETE', `/persons/${personId}`), 204);
    await expectStatus(await logout(token), 204);
    expect(await validity(token)).toEqual({
      valid: false,
      invalidity_reason: 'invalid_token_content',
      invalidity_detail: 'revoked',
    });
    expect(await loggedOut(personId)).toEqual([]);
  });

  it('refuses without a token, or with one that is not a valid person token, with 401 and the Bearer challenge', async () => {
    const none = await logout(undefined);
    await expectStatus(none, 401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(none.json.errors[0].message).toContain("logout needs the person's token");

    const { token } = await s.personWithToken();
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(86)}`;
    const bad = await logout(forged);
    await expectStatus(bad, 401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(bad.json.errors[0].message).toContain('(bad_signature)');

    // Signed with the token keys, but naming no person (an OAuth access token looks like this).
    const now = Math.floor(Date.now() / 1000);
    const access = await s.service.ctx.signer.sign(TOKEN_KEYS_OWNER, {
      iss: 'https://ids.test',
      sub: 'client-1',
      oid: s.org.id,
      jti: crypto.randomUUID(),
      iat: now,
      exp: now + 600,
      client_id: 'client-1',
    });
    const notPerson = await logout(access);
    await expectStatus(notPerson, 401);
    expect(notPerson.json.errors[0].message).toContain('(not_a_person_token)');
    expect(await validity(token)).toMatchObject({ valid: true });
  });

  it('refuses a body that names the person or is not an object, and then revokes nothing', async () => {
    const { personId, token } = await s.personWithToken();
    const named = await logout(token, { body: { person_id: personId } });
    await expectStatus(named, 400);
    expect(named.json.errors[0].message).toContain('body.person_id: unknown member');
    await expectStatus(await logout(token, { body: [] }), 400);
    await expectStatus(await logout(token, { raw: 'bye' }), 400);
    const wrong = await logout(token, { body: { browser_metadata: { user_agent: 7 } } });
    await expectStatus(wrong, 400);
    expect(wrong.json.errors[0].message).toContain('body.browser_metadata.user_agent');
    const consistency = await logout(token, { headers: { 'service-required-consistency': 'everywhere' } });
    await expectStatus(consistency, 400);
    expect(await validity(token)).toMatchObject({ valid: true });
    expect(await loggedOut(personId)).toEqual([]);
  });

  it('refuses a browser Origin the organization does not list, before revoking', async () => {
    const { token } = await s.personWithToken();
    const res = await logout(token, { headers: { origin: 'https://evil.example' } });
    await expectStatus(res, 403);
    expect(await validity(token)).toMatchObject({ valid: true });
  });
});
