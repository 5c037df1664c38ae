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
  it('says only the query response mode is supported (the default would claim fragment too)', async () => {
    // The whole document in the assertion, so a failure shows what was published.
    expect(await discover(s)).toMatchObject({ response_modes_supported: ['query'] });
    for (const doc of await metadata()) expect(doc).toMatchObject({ response_modes_supported: ['query'] });
  });

  it('says request objects are not supported, by value or by reference', async () => {
    for (const doc of await metadata())
      expect(doc).toMatchObject({
        request_parameter_supported: false,
        request_uri_parameter_supported: false,
      });
  });
});
