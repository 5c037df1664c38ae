import { OAuthError } from '../../../core/capabilities/oauth2-server.ts';
import type { EndpointDeps, OAuthEndpoint } from './endpoint.ts';
import { oauthEndpoint } from './endpoint.ts';
import type { OAuthAnswer } from './responses.ts';

/** The answer of a pushed request: 201 (RFC 9126 §2.2), never cached. */
const created = (body: unknown): OAuthAnswer => ({
  status: 201,
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' },
});

/** RFC 9449 §7: a DPoP key's JWK SHA-256 thumbprint, base64url without padding. */
const JKT = /^[A-Za-z0-9_-]{43}$/;

/**
 * POST /oauth2/par (RFC 9126 §2): the client authenticates exactly as at the token endpoint (a public
 * client by client_id alone) and pushes the parameters of its authorization request; the handler the
 * authorization endpoint's plugin registered checks them as that endpoint would and stores them, and
 * the client gets the request_uri to send the browser with. `request_uri` in the body is refused
 * (§2.1). A DPoP proof on the request binds the authorization code to its key (RFC 9449 §10), as a
 * `dpop_jkt` parameter would; both, and they must name one key.
 */
export function pushedAuthorizationEndpoint(deps: EndpointDeps): OAuthEndpoint {
  const { registry, analyticsOf } = deps;
  return oauthEndpoint(deps, async (client, params, request) => {
    const handler = registry.pushed.handler;
    if (!handler)
      throw new OAuthError('invalid_request', 'pushed authorization requests are not offered here');
    if (params.has('request_uri'))
      throw new OAuthError(
        'invalid_request',
        'request_uri must not be pushed: a pushed authorization request carries the parameters themselves (RFC 9126 section 2.1)',
      );
    const asked = params.get('dpop_jkt');
    if (asked !== undefined && !JKT.test(asked))
      throw new OAuthError(
        'invalid_request',
        'dpop_jkt must be the JWK SHA-256 thumbprint of a DPoP key: 43 base64url characters (RFC 9449 section 10)',
      );
    const proof = request.headers.has('dpop') ? await deps.dpop.check(request) : undefined;
    if (proof && asked !== undefined && asked !== proof.jkt)
      throw new OAuthError(
        'invalid_dpop_proof',
        "dpop_jkt names another key than the request's DPoP proof (RFC 9449 section 10.1)",
      );
    const jkt = proof?.jkt ?? asked;
    const pushed = await handler.handle({
      client,
      params,
      ...(jkt !== undefined ? { dpop: { jkt } } : {}),
      request: analyticsOf(request),
    });
    const answer = created(pushed);
    const nonce = proof ? deps.dpop.nonce() : undefined;
    return nonce ? { ...answer, headers: { ...answer.headers, 'dpop-nonce': await nonce } } : answer;
  });
}
