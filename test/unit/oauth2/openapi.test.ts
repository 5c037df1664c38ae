import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type OAuth2TestService, startOAuth2Service } from './fixture.ts';

let t: OAuth2TestService;
beforeAll(async () => {
  t = await startOAuth2Service();
});
afterAll(() => t.stop());

describe('the OpenAPI document', () => {
  it('describes the client routes and the form-encoded token endpoints', async () => {
    const doc = await t.call('GET', '/openapi.json');
    await expectStatus(doc, 200);
    const paths = doc.json.paths;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        '/oauth2/clients',
        '/oauth2/clients/{oauth_client_id}',
        '/oauth2/clients/{oauth_client_id}/secret',
        '/oauth2/tokens',
        '/oauth2/tokens/introspect',
        '/oauth2/tokens/revoke',
      ]),
    );
    const create = paths['/oauth2/clients'].post;
    expect(create.tags).toEqual(['OAuth2']);
    expect(create.requestBody.content['application/json'].schema.required).toEqual([
      'client_name',
      'grant_types',
    ]);
    // The sign-in session and logout members, described in the create and PATCH bodies and the answers.
    const logoutMembers = [
      'post_logout_redirect_uris',
      'backchannel_logout_uri',
      'backchannel_logout_session_required',
      'first_party',
    ];
    const one = paths['/oauth2/clients/{oauth_client_id}'];
    for (const schema of [
      create.requestBody.content['application/json'].schema,
      one.patch.requestBody.content['application/json'].schema,
      create.responses['201'].content['application/json'].schema.properties.result,
      one.get.responses['200'].content['application/json'].schema.properties.result,
    ])
      for (const member of [
        ...logoutMembers,
        'token_endpoint_auth_method',
        'scope',
        'jwks',
        'jwks_uri',
        'contacts',
      ])
        expect(schema.properties[member]?.description, member).toEqual(expect.any(String));
    const token = paths['/oauth2/tokens'].post;
    const form = token.requestBody.content['application/x-www-form-urlencoded'].schema;
    expect(form.required).toEqual(['grant_type']);
    expect(form.properties.client_assertion_type.enum).toEqual([
      'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    ]);
    expect(form.properties.client_assertion.description).toContain('private_key_jwt');
    expect(form.properties.grant_type.enum).toEqual([
      'client_credentials',
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ]);
    expect(token.security).toEqual([{ clientBasic: [] }]);
    expect(doc.json.components.securitySchemes.clientBasic).toEqual({ type: 'http', scheme: 'basic' });
    expect(Object.keys(token.responses)).toEqual(['200', '400', '401']);
  });
});
