import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type AuthorizeService, discover, startAuthorizeService } from './fixture.ts';

let s: AuthorizeService;
beforeAll(async () => {
  s = await startAuthorizeService();
});
afterAll(() => s.stop());

/** Both metadata documents (OIDC Discovery and RFC 8414), read raw. */
async function metadata() {
  const docs: Record<string, unknown>[] = [];
  for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
    const res = await fetch(`${s.url}${path}`);
    await expectStatus(res, 200);
    docs.push(await res.json());
  }
  return docs;
}

describe('the authorization server metadata', () => {
  it('says the query and form_post response modes are supported (the default would claim fragment too)', async () => {
    // The whole document in the assertion, so a failure shows what was published.
    const modes = { response_modes_supported: ['query', 'form_post'] };
    expect(await discover(s)).toMatchObject(modes);
    for (const doc of await metadata()) expect(doc).toMatchObject(modes);
  });

  it('lists the session and logout members (OIDC Discovery, RP-Initiated and Back-Channel Logout)', async () => {
    for (const doc of await metadata())
      expect(doc).toMatchObject({
        end_session_endpoint: `${s.url}/oauth2/logout`,
        backchannel_logout_supported: true,
        backchannel_logout_session_supported: true,
        claims_parameter_supported: true,
        prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
        claims_supported: expect.arrayContaining(['sid', 'amr', 'acr', 'auth_time']),
      });
  });

  it('says request objects are not supported, by value or by reference', async () => {
    for (const doc of await metadata())
      expect(doc).toMatchObject({
        request_parameter_supported: false,
        request_uri_parameter_supported: false,
      });
  });
});
