// DPoP (RFC 9449) on the device grant (RFC 8628) and token exchange (RFC 8693): openid-client polls and
// exchanges with its DPoP handle; proofs made by hand try another URL, another method and a replay.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import * as openid from 'openid-client';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { MadePerson } from '../../helpers/identity-service.ts';
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
  startAuthorizeService,
} from './fixture.ts';

const clock = manualClock(Date.now());
/** The service's clock brought to real time: openid-client's proofs carry the real iat. */
const catchUp = () => clock.advance(Math.max(0, Date.now() - clock.now()));

let s: AuthorizeService;
let cli: MadeClient;
let tv: MadeClient;
let app: MadeClient;
let gateway: MadeClient;
let ada: MadePerson;

beforeAll(async () => {
  s = await startAuthorizeService({ clock, env: { OAUTH2_DEVICE_CODE_RATE_LIMIT: '1000/1000' } });
  cli = await s.createClient({
    client_name: 'Acme CLI',
    grant_types: [DEVICE, 'refresh_token'],
    redirect_uris: [],
    public: true,
  });
  tv = await s.createClient({ client_name: 'TV', grant_types: [DEVICE, 'refresh_token'], redirect_uris: [] });
  app = await s.createClient();
  gateway = await s.createClient({
    client_name: 'Gateway',
    grant_types: [EXCHANGE],
    redirect_uris: [],
    scopes: ['openid', 'read'],
  });
  ada = await s.person();
});
afterAll(() => s.stop());

/** A device authorization of `client` by openid-client. */
async function initiate(client: MadeClient) {
  const config = await configOf(s, client);
  return { config, response: await openid.initiateDeviceAuthorization(config, { scope: 'openid email' }) };
}

describe('the device grant with DPoP', () => {
  it("binds a public client's tokens to the poll's key: cnf.jkt, userinfo and introspection, refresh by that key only", async () => {
    catchUp();
    const { config, response } = await initiate(cli);
    await approveDevice(s, response.user_code, ada);
    const { handle, jkt } = await dpopHandle(config);
    const tokens = await openid.pollDeviceAuthorizationGrant(
      config,
      { ...response, interval: 0 },
      undefined,
      {
        DPoP: handle,
      },
    );
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });

    const info = await openid.fetchUserInfo(config, tokens.access_token, ada.personId, { DPoP: handle });
    expect(info.sub).toBe(ada.personId);
    const asBearer = await fetch(`${s.url}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    await expectStatus(asBearer, 401);
    expect(asBearer.headers.get('www-authenticate')).toStartWith('DPoP error="invalid_token"');
    expect(await introspect(s, app, tokens.access_token)).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt },
    });

    // The refresh token is bound (RFC 9449 §5): no proof, or another key's, is refused; the holder's works.
    const noProof = await tokenRequest(s, cli, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
    });
    await expectOAuthError(noProof, 400, 'invalid_dpop_proof', /bound to a DPoP key/);
    const thief = await dpopHandle(config);
    const stolen = await refusalOf(
      openid.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: thief.handle }),
    );
    expect(stolen.error).toBe('invalid_dpop_proof');
    const refreshed = await openid.refreshTokenGrant(config, tokens.refresh_token!, undefined, {
      DPoP: handle,
    });
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt });
  });

  it("binds a confidential device client's access token, not its refresh token (it authenticates)", async () => {
    catchUp();
    const { config, response } = await initiate(tv);
    await approveDevice(s, response.user_code, ada);
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
    const plain = await tokenRequest(s, tv, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
    });
    await expectStatus(plain, 200);
    expect(plain.json.token_type).toBe('bearer');
  });

  it('takes a pending poll with a proof; refuses a proof for another URL, another method, or replayed', async () => {
    catchUp();
    const { response } = await initiate(cli);
    const key = await dpopKey();
    const poll = (dpop: string) =>
      tokenRequest(s, cli, { grant_type: DEVICE, device_code: response.device_code }, dpop);
    const first = await proof(s, key);
    await expectOAuthError(await poll(first), 400, 'authorization_pending');
    await expectOAuthError(await poll(first), 400, 'invalid_dpop_proof', /replayed/);
    await expectOAuthError(
      await poll(await proof(s, key, { htu: `${s.url}/oauth2/device_authorization` })),
      400,
      'invalid_dpop_proof',
      /another URL \(htu/,
    );
    await expectOAuthError(
      await poll(await proof(s, key, { htu: 'https://attacker.example/oauth2/tokens' })),
      400,
      'invalid_dpop_proof',
      /another URL/,
    );
    await expectOAuthError(
      await poll(await proof(s, key, { htm: 'GET' })),
      400,
      'invalid_dpop_proof',
      /method GET/,
    );

    // Approved, and the interval past: the code still gives its tokens, bound to the good proof's key.
    await approveDevice(s, response.user_code, ada);
    clock.advance(5000);
    const ok = await poll(await proof(s, key, {}, Math.floor(clock.now() / 1000)));
    await expectStatus(ok, 200);
    expect(ok.json.token_type).toBe('DPoP');
    expect(decodeJwt(String(ok.json.access_token)).cnf).toEqual({ jkt: key.jkt });
  });
});

describe('token exchange with DPoP', () => {
  /** An access token of the app for Ada, through the mint API. */
  async function subjectToken() {
    const res = await s.call('POST', '/oauth2/tokens/mint', {
      body: { person_id: ada.personId, client_id: app.client_id, scopes: ['openid', 'read'] },
    });
    await expectStatus(res, 200);
    return String(res.json.result.access_token);
  }

  it("binds the exchanged token to the proof's key, and userinfo and introspection honour it", async () => {
    catchUp();
    const config = await configOf(s, gateway);
    const { handle, jkt } = await dpopHandle(config);
    const answer = await openid.genericGrantRequest(
      config,
      EXCHANGE,
      { subject_token: await subjectToken(), subject_token_type: ACCESS },
      { DPoP: handle },
    );
    expect(answer.token_type).toBe('dpop');
    expect(answer.issued_token_type).toBe(ACCESS);
    expect(decodeJwt(answer.access_token)).toMatchObject({ sub: ada.personId, cnf: { jkt } });
    expect(await introspect(s, app, answer.access_token)).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt },
    });
    const info = await openid.fetchUserInfo(config, answer.access_token, ada.personId, { DPoP: handle });
    expect(info.sub).toBe(ada.personId);
    const asBearer = await fetch(`${s.url}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${answer.access_token}` },
    });
    await expectStatus(asBearer, 401);
  });

  it('refuses a proof for another URL, another method, or replayed; without one the token is bearer', async () => {
    catchUp();
    const key = await dpopKey();
    const subject = await subjectToken();
    const form = { grant_type: EXCHANGE, subject_token: subject, subject_token_type: ACCESS };
    const exchange = (dpop?: string) => tokenRequest(s, gateway, form, dpop);
    const once = await proof(s, key);
    const bound = await exchange(once);
    await expectStatus(bound, 200);
    expect(bound.json.token_type).toBe('DPoP');
    await expectOAuthError(await exchange(once), 400, 'invalid_dpop_proof', /replayed/);
    await expectOAuthError(
      await exchange(await proof(s, key, { htu: `${s.url}/oauth2/tokens/introspect` })),
      400,
      'invalid_dpop_proof',
      /another URL/,
    );
    await expectOAuthError(
      await exchange(await proof(s, key, { htm: 'PUT' })),
      400,
      'invalid_dpop_proof',
      /method PUT/,
    );
    const plain = await exchange();
    await expectStatus(plain, 200);
    expect(plain.json.token_type).toBe('bearer');
    expect(decodeJwt(String(plain.json.access_token)).cnf).toBeUndefined();
  });
});
