import { decodeJwt } from 'jose';
import { type OAuthClient, OAuthError } from '../../../core/capabilities/oauth2-server.ts';
import { type AssertionVerifier, JWT_BEARER_ASSERTION } from './assertions.ts';
import type { ClientCache, KnownClient } from './cache.ts';

/**
 * How the client identified itself: HTTP Basic, client_secret in the form, client_id alone (public), or
 * a JWT client assertion (RFC 7523: private_key_jwt or client_secret_jwt, told apart by its client's
 * registration and its alg).
 */
export interface PresentedClient {
  method: 'client_secret_basic' | 'client_secret_post' | 'none' | 'client_assertion';
  clientId: string;
  secret?: string;
  /** The client_assertion, for the client_assertion method. */
  assertion?: string;
}

const invalidClient = (description: string) => new OAuthError('invalid_client', description, 401);

/** RFC 6749 appendix B: each of the Basic credentials is form-url-encoded before base64. */
function formDecoded(part: string, what: string): string {
  // Most IDs and secrets (UUIDs, base64url) carry nothing encoded: skip the decoder for them.
  if (!part.includes('%') && !part.includes('+')) return part;
  try {
    return decodeURIComponent(part.replaceAll('+', ' '));
  } catch {
    throw invalidClient(
      `the ${what} in the Authorization header is not form-url-encoded (RFC 6749 appendix B)`,
    );
  }
}

function basicCredentials(header: string): { clientId: string; secret: string } {
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  if (scheme.toLowerCase() !== 'basic')
    throw invalidClient(
      `the Authorization header must use the Basic scheme (got ${JSON.stringify(scheme.slice(0, 20))}); or send client_id and client_secret in the form`,
    );
  let decoded: string;
  try {
    decoded = atob(header.slice(space + 1).trim());
  } catch {
    throw invalidClient('the Basic credentials are not base64');
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient('the Basic credentials must be client_id:client_secret');
  return {
    clientId: formDecoded(decoded.slice(0, colon), 'client_id'),
    secret: formDecoded(decoded.slice(colon + 1), 'client secret'),
  };
}

/**
 * The client's credentials, by exactly one method (RFC 6749 §2.3): HTTP Basic, or client_id and
 * client_secret in the form, or client_id alone for a public client. Basic together with a
 * client_secret in the form is refused; a client_id in the form beside Basic must name the same client.
 * Credentials are taken out of `params`.
 */
export function readPresentedClient(headers: Headers, params: Map<string, string>): PresentedClient {
  const authorization = headers.get('authorization');
  const formId = params.get('client_id');
  const formSecret = params.get('client_secret');
  const assertionType = params.get('client_assertion_type');
  const assertion = params.get('client_assertion');
  params.delete('client_id');
  params.delete('client_secret');
  params.delete('client_assertion_type');
  params.delete('client_assertion');
  if (assertionType !== undefined || assertion !== undefined) {
    if (authorization !== null || formSecret !== undefined)
      throw new OAuthError(
        'invalid_request',
        `the client authenticates twice: a client_assertion and ${authorization !== null ? 'HTTP Basic' : 'client_secret'}; use one method`,
      );
    return presentedAssertion(assertionType, assertion, formId);
  }
  if (authorization !== null) {
    if (formSecret !== undefined)
      throw new OAuthError(
        'invalid_request',
        'the client authenticates twice: HTTP Basic and client_secret in the form; use one method',
      );
    const basic = basicCredentials(authorization);
    if (formId !== undefined && formId !== basic.clientId)
      throw new OAuthError(
        'invalid_request',
        'client_id in the form names another client than the HTTP Basic credentials',
      );
    return { method: 'client_secret_basic', ...basic };
  }
  if (formId === undefined) {
    if (formSecret !== undefined)
      throw new OAuthError('invalid_request', 'client_secret is given without client_id');
    throw invalidClient(
      'client authentication is required: HTTP Basic, or client_id (and client_secret) in the form',
    );
  }
  return formSecret === undefined
    ? { method: 'none', clientId: formId }
    : { method: 'client_secret_post', clientId: formId, secret: formSecret };
}

/** A JWT client assertion (RFC 7523 §2.2): the client is its sub, which the verifier checks iss against. */
function presentedAssertion(
  type: string | undefined,
  assertion: string | undefined,
  formId: string | undefined,
): PresentedClient {
  if (type === undefined)
    throw new OAuthError(
      'invalid_request',
      `client_assertion_type is required with client_assertion (${JWT_BEARER_ASSERTION})`,
    );
  if (type !== JWT_BEARER_ASSERTION)
    throw new OAuthError(
      'invalid_request',
      `client_assertion_type must be ${JWT_BEARER_ASSERTION} (got ${JSON.stringify(type.slice(0, 100))})`,
    );
  if (!assertion)
    throw new OAuthError('invalid_request', 'client_assertion is required with client_assertion_type');
  let sub: unknown;
  try {
    sub = decodeJwt(assertion).sub;
  } catch {
    throw invalidClient('client_assertion is not a JWT (a signed JWS in compact form, RFC 7523 section 2.2)');
  }
  if (typeof sub !== 'string' || sub === '')
    throw invalidClient('client_assertion must carry sub: the client_id (RFC 7523 section 3)');
  if (formId !== undefined && formId !== sub)
    throw new OAuthError(
      'invalid_request',
      "client_id in the form names another client than the client_assertion's sub",
    );
  return { method: 'client_assertion', clientId: sub, assertion };
}

/**
 * Authenticates the presented client: a confidential client by its secret (compared in constant time),
 * a public one by client_id alone. Unknown IDs and wrong secrets get one message. A client cached with
 * a secret that matched before is answered at once, not by a promise: the token endpoint's common case
 * then waits only for its signature.
 */
export function authenticateClient(
  clients: ClientCache,
  presented: PresentedClient,
  assertions: AssertionVerifier,
): OAuthClient | Promise<OAuthClient> {
  const known = clients.get(presented.clientId);
  return known instanceof Promise
    ? known.then((k) => checkClient(k, presented, assertions))
    : checkClient(known, presented, assertions);
}

function checkClient(
  known: KnownClient | null,
  presented: PresentedClient,
  assertions: AssertionVerifier,
): OAuthClient | Promise<OAuthClient> {
  if (known === null) throw invalidClient('unknown client_id or wrong client secret');
  const { client } = known;
  // The registered method is enforced both ways: an assertion client never authenticates by its secret.
  if (presented.assertion !== undefined)
    return assertions.verify(known, presented.assertion).then(() => client);
  const method = known.auth.method;
  if (method === 'private_key_jwt' || method === 'client_secret_jwt')
    throw invalidClient(
      `client ${client.clientId} is registered for ${method}: authenticate with a client_assertion (RFC 7523), not ${presented.method === 'none' ? 'client_id alone' : 'its secret'}`,
    );
  if (client.type === 'public') {
    if (presented.method !== 'none')
      throw invalidClient(
        `client ${client.clientId} is public: it has no secret; send client_id alone in the form`,
      );
    return client;
  }
  if (presented.secret === undefined)
    throw invalidClient(
      `client ${client.clientId} is confidential: authenticate with its secret (HTTP Basic or client_secret)`,
    );
  const matched = known.checkSecret(presented.secret);
  const outcome = (ok: boolean) => {
    if (!ok) throw invalidClient('unknown client_id or wrong client secret');
    return client;
  };
  return typeof matched === 'boolean' ? outcome(matched) : matched.then(outcome);
}
