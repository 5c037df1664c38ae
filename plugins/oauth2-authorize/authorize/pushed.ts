import {
  type OAuth2Server,
  OAuthError,
  type OAuthPushedAuthorization,
} from '../../../core/capabilities/oauth2-server.ts';
import { ServiceError } from '../../../core/errors.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { PushedRequestStore } from '../store/pushed-requests.ts';
import { type Checked, checkAuthorizeRequest } from './request.ts';

/**
 * The handler of POST /oauth2/par (RFC 9126 §2), registered with the oauth2 plugin's endpoint, which has
 * authenticated the client and refused a `request_uri` in the body. The parameters, with the client's
 * ID and the DPoP key the endpoint found (`dpop_jkt`, RFC 9449 §10), go through the authorization
 * endpoint's own checks; what that endpoint would show as a page or send to the redirect URI is
 * answered here as JSON (§2.3). Stored, they wait for the authorization request naming them.
 */
export function pushedAuthorization(deps: {
  server: OAuth2Server;
  store: PushedRequestStore;
  baseUrl: string;
  lifetimeSeconds: number;
}): OAuthPushedAuthorization {
  return {
    async handle({ client, params, dpop }) {
      const pushed = new URLSearchParams([...params]);
      pushed.set('client_id', client.clientId);
      if (dpop) pushed.set('dpop_jkt', dpop.jkt);
      let checked: Checked;
      try {
        checked = await checkAuthorizeRequest(deps.server, pushed, deps.baseUrl, { pushed: true });
      } catch (e) {
        // The page errors (a redirect_uri not the client's): answered to the client, never shown.
        if (e instanceof ServiceError) throw new OAuthError('invalid_request', e.message);
        throw e;
      }
      if (!checked.ok) throw new OAuthError(checked.refusal.error, checked.refusal.description);
      const requestUri = await deps.store.push(client.orgId, client.clientId, pushed);
      return { request_uri: requestUri, expires_in: deps.lifetimeSeconds };
    },
  };
}

/** What the authorization endpoint makes of its parameters: as sent, or a pushed request's. */
export type ResolvedRequest =
  | { pushed: false; params: URLSearchParams }
  | { pushed: true; params: URLSearchParams; requestUri: string; clientId: string };

const WHY = {
  unknown: 'request_uri names no pushed authorization request of this service',
  other_client: 'request_uri names no pushed authorization request of this service',
  used: 'request_uri has been used already: a pushed authorization request is good once; push it again',
  expired: 'request_uri has expired: push the authorization request again',
} as const;

/**
 * The parameters an authorization request stands for (RFC 9126 §4). With `request_uri`, they are the
 * pushed request's, found for the client_id sent beside it; any other parameter in the URL is ignored
 * (RFC 9101 §6.3: only the pushed ones are used). One that is unknown, used, expired or another
 * client's is an invalid_request_uri page: its redirect URI was never checked against this client,
 * so nothing is redirected. Finding it does not use it up: `burn` does, once every check has passed.
 */
export async function resolvePushed(
  params: URLSearchParams,
  store: PushedRequestStore,
): Promise<ResolvedRequest> {
  const uris = params.getAll('request_uri');
  if (uris.length === 0) return { pushed: false, params };
  const ids = params.getAll('client_id');
  if (ids.length !== 1 || !ids[0])
    throw AuthorizeErrors.INVALID_CLIENT(
      'client_id is required once beside request_uri (RFC 9126 section 4)',
    );
  if (uris.length > 1 || !uris[0])
    throw AuthorizeErrors.INVALID_REQUEST_URI('invalid_request_uri: request_uri must be given once');
  const found = await store.find(uris[0], ids[0]);
  if (found.kind !== 'open')
    throw AuthorizeErrors.INVALID_REQUEST_URI(`invalid_request_uri: ${WHY[found.kind]}`);
  return { pushed: true, params: found.params, requestUri: uris[0], clientId: ids[0] };
}

/** Uses the pushed request up, once; a second use (or one past its lifetime) is the page error. */
export async function burnPushed(
  resolved: Extract<ResolvedRequest, { pushed: true }>,
  store: PushedRequestStore,
): Promise<void> {
  if (!(await store.burn(resolved.requestUri, resolved.clientId)))
    throw AuthorizeErrors.INVALID_REQUEST_URI(`invalid_request_uri: ${WHY.used}`);
}
