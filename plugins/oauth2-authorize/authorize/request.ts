import type { OAuth2Server, OAuthClient, OAuthErrorCode } from '../../../core/capabilities/oauth2-server.ts';
import { ONE_RESOURCE, resourceRefusal } from '../../../core/tokens/audience.ts';
import { parseScope } from '../../oauth2/grants/index.ts';
import { AuthorizeErrors } from '../errors.ts';
import { checkOidcParams, type OidcParams } from './oidc-params.ts';

/** An authorization request that passed every check: the login may begin. */
export interface AuthorizeRequest extends OidcParams {
  client: OAuthClient;
  redirectUri: string;
  scope: string[];
  state: string | undefined;
  nonce: string | undefined;
  codeChallenge: string | undefined;
  /** The resource asked for (RFC 8707), one the client may ask for; undefined: the organization's own. */
  resource: string | undefined;
  /** Prefills the handle field (OIDC login_hint). */
  loginHint: string | undefined;
  /** `idp`: the client ID of an SSO credential to go straight to, skipping the page. */
  idp: string | undefined;
  /**
   * The JWK thumbprint of the DPoP key the code is bound to (RFC 9449 §10: `dpop_jkt`, or the proof
   * of the pushed request); undefined: not bound.
   */
  dpopJkt: string | undefined;
}

/** A refusal sent back to the client's (trusted) redirect URI, per RFC 6749 §4.1.2.1. */
export interface RedirectedError {
  redirectUri: string;
  error: OAuthErrorCode;
  description: string;
  state: string | undefined;
  /** How the answer goes back: `query` unless the request asked for form_post. */
  responseMode: 'query' | 'form_post';
  /** The client's issuer, the answer's `iss` (RFC 9207). */
  issuer: string;
}

export type Checked = { ok: true; request: AuthorizeRequest } | { ok: false; refusal: RedirectedError };

/** RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is always 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 9449 §10: a JWK SHA-256 thumbprint (RFC 7638), base64url: 43 characters too. */
const JKT = S256_CHALLENGE;
const MAX = { state: 2048, nonce: 512, scope: 2048, loginHint: 320, idp: 512 } as const;

/** The one value of a parameter; undefined when absent, `null` when repeated (RFC 6749 §3.1 forbids it). */
function single(params: URLSearchParams, name: string): string | undefined | null {
  const all = params.getAll(name);
  if (all.length > 1) return null;
  return all[0];
}

/**
 * Validates an authorization request (the query of a GET, the form of a POST, or the parameters a
 * client pushed, RFC 9126). The client and its redirect URI come first: until both hold, a problem
 * is thrown as an AuthorizeErrors page error (never redirected, or the endpoint would be an open
 * redirector). Every later problem is answered as a redirect to the client with `error`. `pushed`:
 * the parameters were pushed (POST /oauth2/par), which a client that requires it must do.
 */
export async function checkAuthorizeRequest(
  server: OAuth2Server,
  params: URLSearchParams,
  publicBaseUrl: string,
  o: { pushed?: boolean } = {},
): Promise<Checked> {
  const clientId = single(params, 'client_id');
  if (clientId === null) throw AuthorizeErrors.INVALID_CLIENT('client_id must be given once; it is repeated');
  if (!clientId) throw AuthorizeErrors.INVALID_CLIENT('client_id is required');
  const client = clientId.length <= 256 ? await server.client(clientId) : undefined;
  if (!client) throw AuthorizeErrors.INVALID_CLIENT('client_id names no client of this service');
  const redirectUri = single(params, 'redirect_uri');
  if (redirectUri === null)
    throw AuthorizeErrors.INVALID_REDIRECT_URI('redirect_uri must be given once; it is repeated');
  if (!redirectUri) throw AuthorizeErrors.INVALID_REDIRECT_URI('redirect_uri is required');
  if (!client.redirectUris.includes(redirectUri))
    throw AuthorizeErrors.INVALID_REDIRECT_URI(
      "redirect_uri must be exactly one of the client's registered redirect URIs",
    );

  // From here on the redirect URI is trusted: refusals go back to the client.
  const rawState = params.getAll('state');
  const state = rawState.length === 1 && rawState[0]!.length <= MAX.state ? rawState[0] : undefined;
  // Refusals go back the way the request asked for, when it asked for one this service answers.
  const responseMode = params.getAll('response_mode').join() === 'form_post' ? 'form_post' : 'query';
  const refuse = (error: OAuthErrorCode, description: string): Checked => ({
    ok: false,
    refusal: { redirectUri, error, description, state, responseMode, issuer: client.issuer },
  });
  for (const name of new Set(params.keys()))
    if (params.getAll(name).length > 1)
      return name === 'resource'
        ? refuse('invalid_target', ONE_RESOURCE)
        : refuse('invalid_request', `${name} must be given once; it is repeated`);
  if (rawState.length === 1 && state === undefined)
    return refuse('invalid_request', `state must be at most ${MAX.state} characters`);
  // OIDC Core 6.1 and 6.2: an OP without request objects must say so, not use the plain parameters
  // (the request object's would win over them). Checked first: the others may be only in the object.
  if (params.has('request'))
    return refuse('request_not_supported', 'request (a request object) is not supported by this service');
  // A request_uri of a pushed request is resolved before (authorize/pushed.ts): one here is not ours.
  if (params.has('request_uri'))
    return refuse('invalid_request_uri', 'request_uri names no pushed authorization request of this client');
  // RFC 9126 §6: such a client's every authorization request goes through POST /oauth2/par.
  if (client.requirePushedAuthorizationRequests && !o.pushed)
    return refuse(
      'invalid_request',
      'this client must push its authorization requests (require_pushed_authorization_requests): POST them to the pushed_authorization_request_endpoint and send client_id and request_uri here',
    );

  if (!client.grantTypes.includes('authorization_code'))
    return refuse('unauthorized_client', 'this client may not use the authorization_code grant');
  const responseType = params.get('response_type');
  if (!responseType) return refuse('invalid_request', 'response_type is required');
  if (responseType !== 'code')
    return refuse(
      'unsupported_response_type',
      'response_type must be code (the only one this service supports)',
    );
  const oidc = checkOidcParams(params);
  if (!oidc.ok) return refuse(oidc.error, oidc.description);

  const scopeParam = params.get('scope');
  if (scopeParam === null || scopeParam.trim() === '') return refuse('invalid_request', 'scope is required');
  const scope = scopeParam.length <= MAX.scope ? parseScope(scopeParam) : undefined;
  if (!scope)
    return refuse('invalid_scope', 'scope must be space-delimited scope tokens (RFC 6749 section 3.3)');
  const beyond = scope.filter((s) => !client.scopes.includes(s));
  if (beyond.length)
    return refuse(
      'invalid_scope',
      `scope ${beyond.join(' ')} is beyond the scopes this client may be granted`,
    );

  // RFC 8707 §2: one of the client's resources, else invalid_target; an empty one counts as absent.
  const resource = params.get('resource') || undefined;
  const unlisted = resource === undefined ? undefined : resourceRefusal(client, resource, publicBaseUrl);
  if (unlisted !== undefined) return refuse('invalid_target', unlisted);

  const challenge = params.get('code_challenge') ?? undefined;
  const method = params.get('code_challenge_method') ?? undefined;
  if (challenge === undefined && method !== undefined)
    return refuse('invalid_request', 'code_challenge_method was given without a code_challenge');
  if (challenge !== undefined) {
    if (method !== 'S256')
      return refuse(
        'invalid_request',
        method === undefined || method === 'plain'
          ? 'code_challenge_method must be S256; plain is refused'
          : 'code_challenge_method must be S256',
      );
    if (!S256_CHALLENGE.test(challenge))
      return refuse(
        'invalid_request',
        'code_challenge must be 43 base64url characters (BASE64URL(SHA256(code_verifier)))',
      );
  } else if (client.type === 'public')
    return refuse('invalid_request', 'code_challenge is required: a public client must use PKCE with S256');

  const nonce = params.get('nonce') ?? undefined;
  if (nonce !== undefined && (nonce.length === 0 || nonce.length > MAX.nonce))
    return refuse('invalid_request', `nonce must be 1 to ${MAX.nonce} characters`);
  const hint = params.get('login_hint') ?? undefined;
  const idp = params.get('idp') ?? undefined;
  if (idp !== undefined && (idp.length === 0 || idp.length > MAX.idp))
    return refuse('invalid_request', `idp must be 1 to ${MAX.idp} characters`);
  const dpopJkt = params.get('dpop_jkt') || undefined;
  if (dpopJkt !== undefined && !JKT.test(dpopJkt))
    return refuse(
      'invalid_request',
      'dpop_jkt must be the JWK SHA-256 thumbprint of a DPoP key: 43 base64url characters (RFC 9449 section 10)',
    );

  return {
    ok: true,
    request: {
      ...oidc.params,
      client,
      redirectUri,
      scope,
      state,
      nonce,
      codeChallenge: challenge,
      resource,
      loginHint: hint && hint.length <= MAX.loginHint ? hint : undefined,
      idp,
      dpopJkt,
    },
  };
}

/**
 * The client's redirect URI with the response parameters added to its query (RFC 6749 §4.1.2 and
 * §4.1.2.1), `iss` included (RFC 9207). Parameters already in the registered URI are kept.
 */
export function redirectTo(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return url.href;
}
