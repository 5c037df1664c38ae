import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import * as openid from 'openid-client';
import { ServiceError } from '../../../core/errors.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type MadePerson, signIn } from '../../helpers/identity-service.ts';
import type { CallOptions } from '../../helpers/service.ts';
import {
  type AuthorizeService,
  expectOAuthError,
  type MadeClient,
  postForm,
  startAuthorizeService,
} from '../oauth2-authorize/fixture.ts';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const JWT = 'urn:ietf:params:oauth:token-type:jwt';
const ID = 'urn:ietf:params:oauth:token-type:id_token';
const ORDERS = 'https://orders.example/api';

const clock = manualClock(Date.parse('2026-05-01T09:00:00Z'));
let s: AuthorizeService;
/** The organization's app, whose access tokens are exchanged. */
let app: MadeClient;
/** A confidential back end allowed to exchange (and to get tokens of its own, as an actor). */
let gateway: MadeClient;
let config: openid.Configuration;
let ada: MadePerson;
/** Another organization's caller, and its own client and person. */
let hostile: CallOptions;
let theirGateway: MadeClient;
let theirPerson: MadePerson;

/** An access token of `client` for the person, through the mint API (`as` another organization). */
async function accessToken(client: MadeClient, person: MadePerson, scopes: string[], as: CallOptions = {}) {
  const res = await s.call('POST', '/oauth2/tokens/mint', {
    ...as,
    body: { person_id: person.personId, client_id: client.client_id, scopes },
  });
  await expectStatus(res, 200);
  return res.json.result as { access_token: string; id_token?: string };
}

/** An identity token of the person, by a password sign-in. */
async function identityToken(person: MadePerson, as: CallOptions = {}): Promise<string> {
  const res = await signIn(s, person, as);
  await expectStatus(res, 200);
  return res.json.result.token;
}

/** A token exchange as a raw form, so a refusal is read as it is. */
const exchange = (form: Record<string, string>, client: MadeClient = gateway) =>
  postForm(s, '/oauth2/tokens', client, { grant_type: EXCHANGE, ...form });

beforeAll(async () => {
  s = await startAuthorizeService({ clock });
  app = await s.createClient({ scopes: ['openid', 'read', 'write', 'admin'] });
  gateway = await s.createClient({
    client_name: 'Gateway',
    grant_types: ['client_credentials', EXCHANGE],
    redirect_uris: [],
    scopes: ['read', 'write', 'email'],
    resources: [ORDERS],
  });
  config = await openid.discovery(new URL(s.url), gateway.client_id, gateway.client_secret, undefined, {
    execute: [openid.allowInsecureRequests],
  });
  ada = await s.person();
  const other = await s.service.ctx.orgs.create('Other');
  hostile = { orgId: other.organization.id, key: other.apiKey };
  theirGateway = await s.createClient(
    { grant_types: [EXCHANGE], redirect_uris: [], scopes: ['read', 'write'] },
    hostile,
  );
  theirPerson = await s.person(hostile);
});
afterAll(() => s.stop());

describe('token exchange (RFC 8693)', () => {
  it('is listed in the discovery document', () => {
    expect(config.serverMetadata().grant_types_supported).toContain(EXCHANGE);
  });

  it('impersonates the person of an access token: sub the person, client_id the exchanging client, no act', async () => {
    const { access_token } = await accessToken(app, ada, ['read', 'write', 'admin']);
    const before = (await s.eventsNamed('TokenMinted_v1')).length;
    s.hook.seen.length = 0;
    const answer = await openid.genericGrantRequest(config, EXCHANGE, {
      subject_token: access_token,
      subject_token_type: ACCESS,
    });
    expect(answer.issued_token_type).toBe(ACCESS);
    expect(answer.token_type).toBe('bearer');
    expect(answer.refresh_token).toBeUndefined();
    // admin is the subject's, not the gateway's; email the gateway's, not the subject's.
    expect(answer.scope).toBe('read write');
    const claims = decodeJwt(answer.access_token);
    expect(claims).toMatchObject({
      sub: ada.personId,
      client_id: gateway.client_id,
      oid: s.org.id,
      aud: `${s.url}/organizations/${s.org.id}`,
      scope: 'read write',
    });
    expect(claims.act).toBeUndefined();
    // The token_minted hook decided on it, for the person, as the oauth2 issuer.
    expect(s.hook.seen.map((d) => [d.issuer, d.personId, d.content.authentications[0]?.method])).toEqual([
      ['oauth2', ada.personId, 'token_exchange'],
    ]);
    // TokenMinted_v1 announced it: the access token's jti, the exchange as its authentication.
    const minted = (await s.eventsNamed('TokenMinted_v1', before + 1)).slice(before);
    expect(minted).toHaveLength(1);
    expect(minted[0]).toMatchObject({
      token_id: claims.jti,
      person_id: ada.personId,
      mint_token_api: false,
      first_token: false,
      authentications: [{ method: 'token_exchange' }],
    });
    // An active token of the organization at introspection.
    const seen = await postForm(s, '/oauth2/tokens/introspect', gateway, { token: answer.access_token });
    expect(seen.json).toMatchObject({ active: true, sub: ada.personId, client_id: gateway.client_id });
  });

  it("exchanges an identity token: the client's scopes, narrowed by scope", async () => {
    const token = await identityToken(ada);
    const all = await openid.genericGrantRequest(config, EXCHANGE, {
      subject_token: token,
      subject_token_type: JWT,
    });
    expect(all.scope).toBe('read write email');
    expect(decodeJwt(all.access_token).sub).toBe(ada.personId);
    const narrowed = await openid.genericGrantRequest(config, EXCHANGE, {
      subject_token: token,
      subject_token_type: JWT,
      scope: 'email',
    });
    expect(narrowed.scope).toBe('email');
  });

  it('delegates with an actor token: act names the actor, and a second delegation nests the first', async () => {
    const { access_token: subject } = await accessToken(app, ada, ['read']);
    const own = await openid.clientCredentialsGrant(config, { scope: 'read' });
    const delegated = await openid.genericGrantRequest(config, EXCHANGE, {
      subject_token: subject,
      subject_token_type: ACCESS,
      actor_token: own.access_token,
      actor_token_type: ACCESS,
    });
    const first = decodeJwt(delegated.access_token);
    expect(first.sub).toBe(ada.personId);
    expect(first.act).toEqual({ sub: gateway.client_id, client_id: gateway.client_id });
    expect(delegated.scope).toBe('read');
    // Introspection tells a resource server who acts, too.
    const seen = await postForm(s, '/oauth2/tokens/introspect', gateway, { token: delegated.access_token });
    expect(seen.json).toMatchObject({ active: true, sub: ada.personId, act: first.act });

    // A person acting next (an identity token as the actor): the current actor outermost (§4.1).
    const bob = await s.person();
    const again = await openid.genericGrantRequest(config, EXCHANGE, {
      subject_token: delegated.access_token,
      subject_token_type: ACCESS,
      actor_token: await identityToken(bob),
      actor_token_type: JWT,
    });
    expect(decodeJwt(again.access_token).act).toEqual({
      sub: bob.personId,
      act: { sub: gateway.client_id, client_id: gateway.client_id },
    });
    // Impersonating a delegated token keeps its actors: a delegation is never laundered away.
    const plain = await openid.genericGrantRequest(config, EXCHANGE, {
      subject_token: delegated.access_token,
      subject_token_type: ACCESS,
    });
    expect(decodeJwt(plain.access_token).act).toEqual(first.act);
  });

  it('never outlives the subject or actor token: exchanging answers again extends nothing', async () => {
    const { access_token } = await accessToken(app, ada, ['read']);
    const subjectExp = decodeJwt(access_token).exp!;
    clock.advance(30 * 60_000);
    const answer = await openid.genericGrantRequest(config, EXCHANGE, {
      subject_token: access_token,
      subject_token_type: ACCESS,
    });
    const claims = decodeJwt(answer.access_token);
    expect(claims.exp).toBe(subjectExp);
    expect(answer.expires_in).toBe(subjectExp - claims.iat!);
    clock.advance(20 * 60_000);
    const again = await openid.genericGrantRequest(config, EXCHANGE, {
      subject_token: answer.access_token,
      subject_token_type: ACCESS,
    });
    expect(decodeJwt(again.access_token).exp).toBe(subjectExp);
    // An actor token about to expire bounds it too.
    const actor = await openid.clientCredentialsGrant(config, { scope: 'read' });
    clock.advance(50 * 60_000);
    const fresh = await accessToken(app, ada, ['read']);
    expect(decodeJwt(fresh.access_token).exp!).toBeGreaterThan(decodeJwt(actor.access_token).exp!);
    const delegated = await openid.genericGrantRequest(config, EXCHANGE, {
      subject_token: fresh.access_token,
      subject_token_type: ACCESS,
      actor_token: actor.access_token,
      actor_token_type: ACCESS,
    });
    expect(decodeJwt(delegated.access_token).exp).toBe(decodeJwt(actor.access_token).exp!);
  });

  it("sets aud from resource or audience, one of the client's resources", async () => {
    const { access_token } = await accessToken(app, ada, ['read']);
    const subject = { subject_token: access_token, subject_token_type: ACCESS };
    const byResource = await openid.genericGrantRequest(config, EXCHANGE, { ...subject, resource: ORDERS });
    expect(decodeJwt(byResource.access_token).aud).toBe(ORDERS);
    const byAudience = await openid.genericGrantRequest(config, EXCHANGE, { ...subject, audience: ORDERS });
    expect(decodeJwt(byAudience.access_token).aud).toBe(ORDERS);

    await expectOAuthError(
      await exchange({ ...subject, resource: 'https://elsewhere.example/api' }),
      400,
      'invalid_target',
      /resource "https:\/\/elsewhere.example\/api" is not one this client may ask for/,
    );
    await expectOAuthError(
      await exchange({ ...subject, audience: 'orders' }),
      400,
      'invalid_target',
      /^audience "orders" is not one this client may ask for/,
    );
    await expectOAuthError(
      await exchange({ ...subject, resource: ORDERS, audience: `${s.url}/organizations/${s.org.id}` }),
      400,
      'invalid_target',
      /resource and audience name different targets/,
    );
  });

  it("never widens the scope: beyond the subject token's or the client's is invalid_scope", async () => {
    const { access_token } = await accessToken(app, ada, ['read']);
    const subject = { subject_token: access_token, subject_token_type: ACCESS };
    await expectOAuthError(
      await exchange({ ...subject, scope: 'read write' }),
      400,
      'invalid_scope',
      /write/,
    );
    await expectOAuthError(await exchange({ ...subject, scope: 'admin' }), 400, 'invalid_scope', /admin/);
  });

  describe('refusals', () => {
    it("refuses another organization's subject token, either way", async () => {
      const theirs = await accessToken(
        await s.createClient({ scopes: ['read'] }, hostile),
        theirPerson,
        ['read'],
        hostile,
      );
      await expectOAuthError(
        await exchange({ subject_token: theirs.access_token, subject_token_type: ACCESS }),
        400,
        'invalid_request',
        /^subject_token is of another organization/,
      );
      await expectOAuthError(
        await exchange({ subject_token: await identityToken(theirPerson, hostile), subject_token_type: JWT }),
        400,
        'invalid_request',
        /^subject_token is of another organization/,
      );
      // Their client, handed our person's token, gets nothing for it; nor for an actor of ours.
      const ours = await accessToken(app, ada, ['read']);
      await expectOAuthError(
        await exchange({ subject_token: ours.access_token, subject_token_type: ACCESS }, theirGateway),
        400,
        'invalid_request',
        /^subject_token is of another organization/,
      );
      await expectOAuthError(
        await exchange(
          {
            subject_token: await identityToken(theirPerson, hostile),
            subject_token_type: JWT,
            actor_token: ours.access_token,
            actor_token_type: ACCESS,
          },
          theirGateway,
        ),
        400,
        'invalid_request',
        /^actor_token is of another organization/,
      );
    });

    it('refuses an ID token as the subject, whatever type it is given', async () => {
      const { id_token } = await accessToken(app, ada, ['openid']);
      expect(id_token).toBeString();
      await expectOAuthError(
        await exchange({ subject_token: id_token!, subject_token_type: ID }),
        400,
        'invalid_request',
        /^subject_token_type "urn:ietf:params:oauth:token-type:id_token" is refused/,
      );
      await expectOAuthError(
        await exchange({ subject_token: id_token!, subject_token_type: JWT }),
        400,
        'invalid_request',
        /^subject_token is not an identity token/,
      );
      await expectOAuthError(
        await exchange({ subject_token: id_token!, subject_token_type: ACCESS }),
        400,
        'invalid_request',
        /^subject_token is not an active access token/,
      );
    });

    it('refuses a revoked or an expired subject token', async () => {
      const { access_token } = await accessToken(app, ada, ['read']);
      await expectStatus(await postForm(s, '/oauth2/tokens/revoke', app, { token: access_token }), 200);
      await expectOAuthError(
        await exchange({ subject_token: access_token, subject_token_type: ACCESS }),
        400,
        'invalid_request',
        /^subject_token is not an active access token/,
      );
      const token = await identityToken(ada);
      await expectStatus(await s.call('POST', '/token/revoke', { body: { token } }), 204);
      await expectOAuthError(
        await exchange({ subject_token: token, subject_token_type: JWT }),
        400,
        'invalid_request',
        /^subject_token has been revoked/,
      );

      const later = await accessToken(app, ada, ['read']);
      const identity = await identityToken(ada);
      clock.advance(2 * 86_400_000);
      await expectOAuthError(
        await exchange({ subject_token: later.access_token, subject_token_type: ACCESS }),
        400,
        'invalid_request',
        /^subject_token is not an active access token/,
      );
      await expectOAuthError(
        await exchange({ subject_token: identity, subject_token_type: JWT }),
        400,
        'invalid_request',
        /^subject_token has expired/,
      );
    });

    it("refuses a client's own token as the subject, and a disabled person's", async () => {
      const own = await openid.clientCredentialsGrant(config, { scope: 'read' });
      await expectOAuthError(
        await exchange({ subject_token: own.access_token, subject_token_type: ACCESS }),
        400,
        'invalid_request',
        /client's own token/,
      );
      const carol = await s.person();
      const { access_token } = await accessToken(app, carol, ['read']);
      await expectStatus(
        await s.call('PATCH', `/persons/${carol.personId}`, { body: { active: false } }),
        200,
      );
      await expectOAuthError(
        await exchange({ subject_token: access_token, subject_token_type: ACCESS }),
        400,
        'invalid_request',
        /disabled or no longer exists/,
      );
    });

    it('refuses a client without the grant, and a public client is never given it', async () => {
      const { access_token } = await accessToken(app, ada, ['read']);
      await expectOAuthError(
        await exchange({ subject_token: access_token, subject_token_type: ACCESS }, app),
        400,
        'unauthorized_client',
        /may not use the urn:ietf:params:oauth:grant-type:token-exchange grant/,
      );
      const res = await s.call('POST', '/oauth2/clients', {
        body: { client_name: 'CLI', public: true, grant_types: [EXCHANGE], scopes: ['read'] },
      });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toMatch(
        /a public client cannot use urn:ietf:params:oauth:grant-type:token-exchange/,
      );
    });

    it('refuses malformed requests naming the parameter', async () => {
      const { access_token } = await accessToken(app, ada, ['read']);
      const subject = { subject_token: access_token, subject_token_type: ACCESS };
      await expectOAuthError(
        await exchange({ subject_token_type: ACCESS }),
        400,
        'invalid_request',
        /^subject_token is required/,
      );
      await expectOAuthError(
        await exchange({ subject_token: access_token }),
        400,
        'invalid_request',
        /^subject_token_type is required/,
      );
      await expectOAuthError(
        await exchange({ ...subject, subject_token_type: 'urn:ietf:params:oauth:token-type:saml2' }),
        400,
        'invalid_request',
        /^subject_token_type .* is not supported/,
      );
      await expectOAuthError(
        await exchange({ ...subject, actor_token: access_token }),
        400,
        'invalid_request',
        /^actor_token_type is required/,
      );
      await expectOAuthError(
        await exchange({ ...subject, actor_token_type: ACCESS }),
        400,
        'invalid_request',
        /^actor_token_type must not be sent without actor_token/,
      );
      await expectOAuthError(
        await exchange({ ...subject, requested_token_type: ID }),
        400,
        'invalid_request',
        /^requested_token_type .* is not issued here/,
      );
      await expectOAuthError(
        await exchange({ ...subject, actor_token: 'garbage', actor_token_type: ACCESS }),
        400,
        'invalid_request',
        /^actor_token is not an active access token/,
      );
    });

    it('is refused when the token_minted hook blocks it, and nothing is announced', async () => {
      const { access_token } = await accessToken(app, ada, ['read']);
      const before = (await s.eventsNamed('TokenMinted_v1')).length;
      s.hook.answer = () => {
        throw new ServiceError(403, 'HOOK_BLOCKED', 'no exchanges today');
      };
      try {
        await expectOAuthError(
          await exchange({ subject_token: access_token, subject_token_type: ACCESS }),
          400,
          'invalid_request',
          /^subject_token was refused by the token_minted hook: no exchanges today/,
        );
      } finally {
        s.hook.answer = () => undefined;
      }
      // openid-client reads the refusal as an RFC 6749 error too.
      s.hook.answer = () => {
        throw new ServiceError(403, 'HOOK_BLOCKED', 'still no');
      };
      try {
        const error = await openid
          .genericGrantRequest(config, EXCHANGE, { subject_token: access_token, subject_token_type: ACCESS })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(openid.ResponseBodyError);
        expect((error as openid.ResponseBodyError).error).toBe('invalid_request');
      } finally {
        s.hook.answer = () => undefined;
      }
      expect(await s.eventsNamed('TokenMinted_v1')).toHaveLength(before);
    });
  });
});
