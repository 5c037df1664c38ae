import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  discover,
  exchange,
  expectOAuthError,
  type MadeClient,
  obtainCode,
  opts,
  postForm,
  refresh,
  startAuthorizeService,
} from './fixture.ts';
import { tokenChecks } from './resource-server.ts';

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
const introspect = (token: string) => tokenChecks(s, as, resourceServer).introspect(token);

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

describe('introspection of the tokens of a person no longer active', () => {
  it('answers active false once the person is disabled, as userinfo and the refresh refuse them', async () => {
    const client = await s.createClient();
    const person = await s.person();
    const tokens = await grant(client, person);
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, sub: person.personId });
    expect(await introspect(tokens.refresh_token)).toMatchObject({ active: true, sub: person.personId });
    const patched = await s.call('PATCH', `/persons/${person.personId}`, { body: { active: false } });
    await expectStatus(patched, 200);

    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect(await introspect(tokens.refresh_token)).toEqual({ active: false });
    const userinfo = await fetch(`${s.url}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    await expectStatus(userinfo, 401);
    await expectOAuthError(await refresh(s, client, tokens.refresh_token), 400, 'invalid_grant', /disabled/);
  });

  it('answers active false for the access token of a deleted person', async () => {
    const client = await s.createClient();
    const person = await s.person();
    const tokens = await grant(client, person);
    await expectStatus(await s.call('DELETE', `/persons/${person.personId}`), 204);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect(await introspect(tokens.refresh_token)).toEqual({ active: false });
  });

  it('keeps a client_credentials token active: its subject is the client, not a person', async () => {
    const res = await oauth.clientCredentialsGrantRequest(
      as,
      { client_id: resourceServer.client_id },
      oauth.ClientSecretBasic(resourceServer.client_secret!),
      { scope: 'read' },
      opts,
    );
    const { access_token } = await oauth.processClientCredentialsResponse(
      as,
      { client_id: resourceServer.client_id },
      res,
    );
    expect(await introspect(access_token)).toMatchObject({
      active: true,
      sub: resourceServer.client_id,
    });
  });
});

describe("introspection with the reference's scope parameter", () => {
  const withScope = (token: string, scope: string) =>
    postForm(s, '/oauth2/tokens/introspect', resourceServer, { token, scope });

  it('answers a token not granted every scope asked as inactive, and one granted them as active', async () => {
    const client = await s.createClient();
    const tokens = await grant(client);
    for (const token of [tokens.access_token, tokens.refresh_token]) {
      const granted = await withScope(token, 'read openid');
      await expectStatus(granted, 200);
      expect(granted.json).toMatchObject({ active: true, scope: 'openid read' });
      const wider = await withScope(token, 'read write');
      await expectStatus(wider, 200);
      expect(wider.json).toEqual({ active: false });
    }
  });

  it('refuses a scope that is not scope tokens with invalid_request', async () => {
    const client = await s.createClient();
    const tokens = await grant(client);
    await expectOAuthError(
      await withScope(tokens.access_token, 'read  write'),
      400,
      'invalid_request',
      /scope/,
    );
  });
});
