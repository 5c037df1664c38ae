import type * as v from 'valibot';
import { OAuth2Errors } from '../errors.ts';
import type { ClientPatchSchema, ClientRow } from '../schema.ts';
import type { ClientInput } from '../store/clients.ts';
import type { TokenEndpointAuthMethod } from './metadata.ts';
import { unique } from './rules.ts';

type Body = v.InferOutput<typeof ClientPatchSchema>;

const invalid = (message: string) => OAuth2Errors.INVALID_CLIENT_SETTINGS(message);

/** The method a client authenticates with: its own, or its type's default. */
export const authMethodOf = (
  row: Pick<ClientRow, 'public' | 'tokenEndpointAuthMethod'>,
): TokenEndpointAuthMethod =>
  (row.tokenEndpointAuthMethod as TokenEndpointAuthMethod | null) ??
  (row.public ? 'none' : 'client_secret_basic');

/**
 * The scopes of a body from `scopes` or `scope` (RFC 7591's space-delimited string), which must agree
 * when both are given; undefined when neither is.
 */
export function scopesOf(body: Pick<Body, 'scopes' | 'scope'>): string[] | undefined {
  const fromString = body.scope === undefined ? undefined : unique(body.scope.split(' '));
  const fromArray = body.scopes === undefined ? undefined : unique(body.scopes);
  if (fromString && fromArray) {
    const a = new Set(fromArray);
    if (fromString.length !== a.size || !fromString.every((s) => a.has(s)))
      throw invalid(
        'body.scope: names other scopes than body.scopes; give one of them (scope is the RFC 7591 space-delimited form of scopes)',
      );
  }
  return fromArray ?? fromString;
}

/**
 * Whether the client is public, from `public` and `token_endpoint_auth_method` on create: `none` is a
 * public client and every other method a confidential one; given both, they must agree.
 */
export function publicOf(body: {
  public?: boolean | undefined;
  token_endpoint_auth_method?: string;
}): boolean {
  const method = body.token_endpoint_auth_method;
  if (method === undefined) return body.public ?? false;
  const isPublic = method === 'none';
  if (body.public !== undefined && body.public !== isPublic)
    throw invalid(
      `body.token_endpoint_auth_method: ${method} is for ${isPublic ? 'public' : 'confidential'} clients, but body.public is ${body.public} (none means a public client, every other method a confidential one)`,
    );
  return isPublic;
}

/**
 * The RFC 7591 members of a validated body as store input, checked against the client they make:
 * private_key_jwt needs keys (jwks or jwks_uri, not both); a PATCH keeps the client's type, and turns
 * a client into client_secret_jwt only at creation (its secret must be kept sealed from the start).
 */
export function metadataInput(
  body: Body,
  current: Pick<ClientRow, 'public' | 'tokenEndpointAuthMethod' | 'jwks' | 'jwksUri' | 'clientId'> | null,
  isPublic: boolean,
): ClientInput {
  const at = (field: string) => (current ? `body.${field} (the client after this change)` : `body.${field}`);
  const method = body.token_endpoint_auth_method;
  if (current && method !== undefined) {
    if ((method === 'none') !== current.public)
      throw invalid(
        `body.token_endpoint_auth_method: client ${current.clientId} is ${current.public ? 'public: its method is none' : 'confidential: its method cannot be none'} (public cannot change)`,
      );
    if (method === 'client_secret_jwt' && authMethodOf(current) !== 'client_secret_jwt')
      throw invalid(
        'body.token_endpoint_auth_method: client_secret_jwt is chosen when the client is created, so that its secret is kept sealed (an HMAC key) from the start; create a new client with it',
      );
  }
  const jwks = body.jwks !== undefined ? body.jwks : (current?.jwks ?? null);
  const jwksUri = body.jwks_uri !== undefined ? body.jwks_uri : (current?.jwksUri ?? null);
  if (jwks !== null && jwksUri !== null)
    throw invalid(
      `${at('jwks')}: give the keys inline (jwks) or by reference (jwks_uri), not both (RFC 7591 section 2)`,
    );
  const finalMethod = method ?? (current ? authMethodOf(current) : isPublic ? 'none' : 'client_secret_basic');
  if (finalMethod === 'private_key_jwt' && jwks === null && jwksUri === null)
    throw invalid(
      `${at('jwks_uri')}: a private_key_jwt client needs its public keys: jwks (inline) or jwks_uri`,
    );
  const input: ClientInput = {};
  if (method !== undefined) input.tokenEndpointAuthMethod = method;
  if (body.jwks !== undefined) input.jwks = body.jwks;
  if (body.jwks_uri !== undefined) input.jwksUri = body.jwks_uri;
  if (body.client_uri !== undefined) input.clientUri = body.client_uri;
  if (body.logo_uri !== undefined) input.logoUri = body.logo_uri;
  if (body.policy_uri !== undefined) input.policyUri = body.policy_uri;
  if (body.tos_uri !== undefined) input.tosUri = body.tos_uri;
  if (body.contacts !== undefined) input.contacts = unique(body.contacts);
  if (body.software_id !== undefined) input.softwareId = body.software_id;
  if (body.software_version !== undefined) input.softwareVersion = body.software_version;
  if (body.require_pushed_authorization_requests !== undefined)
    input.requirePushedAuthorizationRequests = body.require_pushed_authorization_requests;
  if (body.dpop_bound_access_tokens !== undefined)
    input.dpopBoundAccessTokens = body.dpop_bound_access_tokens;
  return input;
}
