import * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type AuthorizeService, type MadeClient, opts } from './fixture.ts';

/** A response read whole: its status, JSON body and text (what a failing assertion prints). */
export interface ReadResponse {
  status: number;
  json: Record<string, unknown>;
  text: string;
}

const read = async (res: Response): Promise<ReadResponse> => {
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : {}, text };
};

/**
 * What a resource server and a client see of a token, through oauth4webapi: introspection by a
 * confidential client of the organization, a refresh by the token's client, userinfo with the access token.
 */
export function tokenChecks(s: AuthorizeService, as: oauth.AuthorizationServer, resourceServer: MadeClient) {
  return {
    /** RFC 7662 introspection by the resource server. */
    async introspect(token: string) {
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
    },
    /** A refresh by the client the token was issued to, answered raw so a refusal can be read. */
    async refresh(client: MadeClient, token: string): Promise<ReadResponse> {
      const auth = client.client_secret ? oauth.ClientSecretBasic(client.client_secret) : oauth.None();
      return read(
        await oauth.refreshTokenGrantRequest(as, { client_id: client.client_id }, auth, token, opts),
      );
    },
    /** GET /oauth2/userinfo with the access token. */
    async userinfo(accessToken: string): Promise<Response> {
      return fetch(`${s.url}/oauth2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    },
  };
}
