import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  discover,
  exchange,
  type MadeClient,
  obtainCode,
  opts,
  startAuthorizeService,
} from './fixture.ts';

let s: AuthorizeService;
let as: oauth.AuthorizationServer;
/** The resource server that asks: a confidential client of the same organization. */
let resourceServer: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService();
  as = await discover(s);
  resourceServer = await s.createClient({ grant_types: ['client_credentials'], redirect_uris: [] });
});
afterAll(() => s.stop());

/** RFC 7662 introspection by the resource server, through oauth4webapi. */
async function introspect(token: string) {
  const client = { client_id: resourceServer.client_id };
  const res = await oauth.introspectionRequest(
    as,
    client,
    oauth.ClientSecretBasic(resourceServer.client_secret!),
    token,
    opts,
  );
  await expectStatus(res, 200);
  return oauth.processIntrospectionResponse(as, client, res);
}

/** A person signed in for the client: the access and refresh tokens of the grant. */
async function grant(client: MadeClient, person?: Awaited<ReturnType<AuthorizeService['person']>>) {
  const { code, verifier } = await obtainCode(s, client, { scope: 'openid read' }, person);
  const res = await exchange(s, client, code, verifier);
  await expectStatus(res, 200);
  return res.json as { access_token: string; refresh_token: string };
}

describe('introspection of the tokens of a grant whose client is deleted', () => {
  it('answers active false for the refresh token, as for the access token', async () => {
    const client = await s.createClient();
    const tokens = await grant(client);
    expect(await introspect(tokens.refresh_token)).toMatchObject({ active: true });
    await expectStatus(await s.call('DELETE', `/oauth2/clients/${client.client_id}`), 204);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect(await introspect(tokens.refresh_token)).toEqual({ active: false });
  });
});
