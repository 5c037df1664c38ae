import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import {
  type OAuthClient,
  OAuthError,
  type OAuthGrantRequest,
  oauth2Server,
} from '../../../core/capabilities/oauth2-server.ts';
import { ServiceError } from '../../../core/errors.ts';
import { definePlugin } from '../../../core/plugin.ts';
import { oauth2 } from '../../../plugins/oauth2/index.ts';
import { persons } from '../../../plugins/persons/index.ts';
import { tokens } from '../../../plugins/tokens/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startTestService } from '../../helpers/service.ts';
import { basic, expectOAuthError, type OAuth2TestService, startOAuth2Service } from './fixture.ts';

const seen: OAuthGrantRequest[] = [];
const revoked: string[] = [];

/** What the authorization endpoint's plugin does: a refresh_token grant and a store of opaque tokens. */
const refreshing = definePlugin({
  id: 'test-refresh',
  requires: { server: oauth2Server },
  setup(_, { server }) {
    server.addGrant({
      type: 'refresh_token',
      async handle(request) {
        seen.push(request);
        const token = request.params.get('refresh_token');
        if (token === 'blocked') throw new ServiceError(403, 'BLOCKED', 'a hook refused the issuance');
        if (token !== 'rt-good') throw new OAuthError('invalid_grant', 'the refresh token is not valid');
        const signed = await server.signAccessToken({
          client: request.client,
          subject: 'person-1',
          scope: ['read'],
          authTime: 1_700_000_000,
        });
        return {
          access_token: signed.token,
          token_type: 'bearer',
          expires_in: signed.expiresIn,
          scope: 'read',
          refresh_token: 'rt-next',
        };
      },
    });
    const mine = (client: OAuthClient, token: string) => token.startsWith(`rt-${client.orgId}`);
    server.addTokenStore({
      async introspect(client, token) {
        return mine(client, token) ? { client_id: client.clientId, token_type: 'refresh_token' } : undefined;
      },
      async revoke(client, token) {
        if (!mine(client, token)) return false;
        revoked.push(token);
        return true;
      },
    });
    return {};
  },
});

let t: OAuth2TestService;
let client: { client_id: string; client_secret?: string };
let auth: { authorization: string };
beforeAll(async () => {
  t = await startOAuth2Service({ plugins: [refreshing] });
  client = await t.createClient({
    grant_types: ['authorization_code', 'refresh_token'],
    redirect_uris: ['https://app.example/cb'],
  });
  auth = { authorization: basic(client.client_id, client.client_secret!) };
});
afterAll(() => t.stop());

describe('the grant registry', () => {
  it('dispatches a grant another plugin registered, without the credentials in its parameters', async () => {
    const res = await t.post('/oauth2/tokens', 'grant_type=refresh_token&refresh_token=rt-good&scope=read', {
      ...auth,
      'user-agent': 'registry-test',
    });
    await expectStatus(res, 200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.json();
    expect(body).toMatchObject({
      token_type: 'bearer',
      refresh_token: 'rt-next',
      scope: 'read',
      expires_in: 3600,
    });
    const claims = await t.service.ctx.capability(oauth2Server)!.verifyAccessToken(body.access_token);
    expect(claims).toMatchObject({ sub: 'person-1', client_id: client.client_id, auth_time: 1_700_000_000 });
    const request = seen.at(-1)!;
    expect(request.client.clientId).toBe(client.client_id);
    expect([...request.params.keys()].sort()).toEqual(['grant_type', 'refresh_token', 'scope']);
    expect(request.request.userAgent).toBe('registry-test');
    expect(request.request.clientIpAddress).toBe('127.0.0.1');
  });

  it("answers the grant's OAuthError and a ServiceError in the OAuth shape", async () => {
    const bad = await t.post('/oauth2/tokens', 'grant_type=refresh_token&refresh_token=rt-bad', auth);
    expect(await expectOAuthError(bad, 400, 'invalid_grant')).toBe('the refresh token is not valid');
    const blocked = await t.post('/oauth2/tokens', 'grant_type=refresh_token&refresh_token=blocked', auth);
    expect(await expectOAuthError(blocked, 403, 'access_denied')).toBe('a hook refused the issuance');
  });

  it('lists the registered grants when refusing an unknown one', async () => {
    const res = await t.post('/oauth2/tokens', 'grant_type=urn:example:other', auth);
    expect(await expectOAuthError(res, 400, 'unsupported_grant_type')).toContain(
      '(supported: client_credentials, urn:ietf:params:oauth:grant-type:token-exchange, refresh_token)',
    );
  });

  it('consults registered token stores for opaque tokens at introspection and revocation', async () => {
    const opaque = `rt-${t.org.id}-abc`;
    const res = await t.post(
      '/oauth2/tokens/introspect',
      `token=${opaque}&token_type_hint=refresh_token`,
      auth,
    );
    await expectStatus(res, 200);
    expect(await res.json()).toEqual({
      active: true,
      client_id: client.client_id,
      token_type: 'refresh_token',
    });
    const unknown = await t.post('/oauth2/tokens/introspect', 'token=rt-elsewhere', auth);
    expect(await unknown.json()).toEqual({ active: false });
    await expectStatus(await t.post('/oauth2/tokens/revoke', `token=${opaque}`, auth), 200);
    expect(revoked).toEqual([opaque]);
  });

  it('refuses a second handler of one grant type at start-up', async () => {
    const twice = definePlugin({
      id: 'test-twice',
      requires: { server: oauth2Server },
      setup(_, { server }) {
        server.addGrant({ type: 'client_credentials', handle: () => Promise.reject(new Error('unused')) });
        return {};
      },
    });
    const started = startTestService({ definition: { plugins: [persons(), tokens(), oauth2(), twice] } });
    expect(started).rejects.toThrow('oauth2: a handler of the client_credentials grant is registered twice');
    await started.catch(() => {});
  });
});
