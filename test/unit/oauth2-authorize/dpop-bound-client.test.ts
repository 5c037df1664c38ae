// A client's dpop_bound_access_tokens (RFC 9449 §5.2): set on create and PATCH, shown in its JSON, and
// every token request of such a client without a proof refused, whatever the grant.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import * as openid from 'openid-client';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { MadePerson } from '../../helpers/identity-service.ts';
import type { CallOptions } from '../../helpers/service.ts';
import {
  ACCESS,
  approveDevice,
  configOf,
  DEVICE,
  dpopHandle,
  dpopKey,
  EXCHANGE,
  introspect,
  proof,
  refusalOf,
  tokenRequest,
} from './dpop-fixture.ts';
import {
  type AuthorizeService,
  expectOAuthError,
  type MadeClient,
  obtainCode,
  REDIRECT,
  startAuthorizeService,
} from './fixture.ts';

let s: AuthorizeService;
let ada: MadePerson;
let hostile: CallOptions;

beforeAll(async () => {
  s = await startAuthorizeService();
  ada = await s.person();
  const other = await s.service.ctx.orgs.create('Other');
  hostile = { orgId: other.organization.id, key: other.apiKey };
});
afterAll(() => s.stop());

const machine = (extra: Record<string, unknown> = {}) =>
  s.createClient({ grant_types: ['client_credentials'], redirect_uris: [], ...extra });
const clientCredentials = (client: MadeClient, dpop?: string) =>
  tokenRequest(s, client, { grant_type: 'client_credentials' }, dpop);
const REQUIRED = /dpop_bound_access_tokens: every token request must carry a DPoP proof/;

describe('dpop_bound_access_tokens on the client', () => {
  it('is false unless set; create and PATCH set it, the JSON shows it; a non-boolean is refused by name', async () => {
    const plain = await machine();
    const read = await s.call('GET', `/oauth2/clients/${plain.client_id}`);
    await expectStatus(read, 200);
    expect(read.json.result.dpop_bound_access_tokens).toBe(false);

    const bound = await machine({ dpop_bound_access_tokens: true });
    expect((bound as MadeClient & { dpop_bound_access_tokens: boolean }).dpop_bound_access_tokens).toBe(true);
    const patched = await s.call('PATCH', `/oauth2/clients/${plain.client_id}`, {
      body: { dpop_bound_access_tokens: true },
    });
    await expectStatus(patched, 200);
    expect(patched.json.result.dpop_bound_access_tokens).toBe(true);
    const listed = await s.call('GET', '/oauth2/clients');
    await expectStatus(listed, 200);
    const byId = new Map(
      (listed.json.result as { client_id: string; dpop_bound_access_tokens: boolean }[]).map((c) => [
        c.client_id,
        c.dpop_bound_access_tokens,
      ]),
    );
    expect(byId.get(plain.client_id)).toBe(true);

    for (const value of ['yes', 1, null]) {
      const res = await s.call('PATCH', `/oauth2/clients/${plain.client_id}`, {
        body: { dpop_bound_access_tokens: value },
      });
      await expectStatus(res, 400);
      expect(JSON.stringify(res.json)).toContain('dpop_bound_access_tokens');
    }
  });

  it("another organization cannot read or turn off our client's binding", async () => {
    const bound = await machine({ dpop_bound_access_tokens: true });
    const res = await s.call('PATCH', `/oauth2/clients/${bound.client_id}`, {
      ...hostile,
      body: { dpop_bound_access_tokens: false },
    });
    await expectStatus(res, 404);
    await expectStatus(await s.call('GET', `/oauth2/clients/${bound.client_id}`, hostile), 404);
    await expectOAuthError(await clientCredentials(bound), 400, 'invalid_dpop_proof', REQUIRED);
  });
});

describe("a dpop_bound client's token requests", () => {
  it('client_credentials: refused without a proof or with a bad one, bound with one (openid-client)', async () => {
    const bound = await machine({ dpop_bound_access_tokens: true });
    await expectOAuthError(await clientCredentials(bound), 400, 'invalid_dpop_proof', REQUIRED);
    const key = await dpopKey();
    await expectOAuthError(
      await clientCredentials(bound, await proof(s, key, { htu: `${s.url}/oauth2/clients` })),
      400,
      'invalid_dpop_proof',
      /another URL/,
    );
    const config = await configOf(s, bound);
    const refused = await refusalOf(openid.clientCredentialsGrant(config));
    expect(refused.error).toBe('invalid_dpop_proof');
    const { handle, jkt } = await dpopHandle(config);
    const tokens = await openid.clientCredentialsGrant(config, undefined, { DPoP: handle });
    expect(tokens.token_type).toBe('dpop');
    expect(await introspect(s, bound, tokens.access_token)).toMatchObject({ active: true, cnf: { jkt } });

    // Turned off by PATCH: a proof is taken when sent, no longer required.
    const off = await s.call('PATCH', `/oauth2/clients/${bound.client_id}`, {
      body: { dpop_bound_access_tokens: false },
    });
    await expectStatus(off, 200);
    const plain = await clientCredentials(bound);
    await expectStatus(plain, 200);
    expect(plain.json.token_type).toBe('bearer');
  });

  it('authorization_code: refused without a proof before the code is spent, so the proof’s retry gets the tokens', async () => {
    const web = await s.createClient({ public: true, dpop_bound_access_tokens: true });
    const { code, verifier } = await obtainCode(s, web, {}, ada);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
    await expectOAuthError(await tokenRequest(s, web, form), 400, 'invalid_dpop_proof', REQUIRED);
    const key = await dpopKey();
    const ok = await tokenRequest(s, web, form, await proof(s, key));
    await expectStatus(ok, 200);
    expect(ok.json.token_type).toBe('DPoP');
    expect(decodeJwt(String(ok.json.access_token)).cnf).toEqual({ jkt: key.jkt });
  });

  it('device_code: a poll without a proof is refused even while pending; with one, the tokens are bound', async () => {
    const cli = await s.createClient({
      grant_types: [DEVICE, 'refresh_token'],
      redirect_uris: [],
      public: true,
      dpop_bound_access_tokens: true,
    });
    const config = await configOf(s, cli);
    const response = await openid.initiateDeviceAuthorization(config, { scope: 'openid' });
    const poll = (dpop?: string) =>
      tokenRequest(s, cli, { grant_type: DEVICE, device_code: response.device_code }, dpop);
    await expectOAuthError(await poll(), 400, 'invalid_dpop_proof', REQUIRED);
    await approveDevice(s, response.user_code, ada);
    await expectOAuthError(await poll(), 400, 'invalid_dpop_proof', REQUIRED);
    const { handle, jkt } = await dpopHandle(config);
    const tokens = await openid.pollDeviceAuthorizationGrant(
      config,
      { ...response, interval: 0 },
      undefined,
      {
        DPoP: handle,
      },
    );
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });
    const info = await openid.fetchUserInfo(config, tokens.access_token, ada.personId, { DPoP: handle });
    expect(info.sub).toBe(ada.personId);
  });

  it('token exchange: refused without a proof, bound with one', async () => {
    const app = await s.createClient();
    const gateway = await s.createClient({
      grant_types: [EXCHANGE],
      redirect_uris: [],
      scopes: ['read'],
      dpop_bound_access_tokens: true,
    });
    const minted = await s.call('POST', '/oauth2/tokens/mint', {
      body: { person_id: ada.personId, client_id: app.client_id, scopes: ['read'] },
    });
    await expectStatus(minted, 200);
    const form = {
      grant_type: EXCHANGE,
      subject_token: String(minted.json.result.access_token),
      subject_token_type: ACCESS,
    };
    await expectOAuthError(await tokenRequest(s, gateway, form), 400, 'invalid_dpop_proof', REQUIRED);
    const key = await dpopKey();
    const ok = await tokenRequest(s, gateway, form, await proof(s, key));
    await expectStatus(ok, 200);
    expect(decodeJwt(String(ok.json.access_token)).cnf).toEqual({ jkt: key.jkt });
  });
});
