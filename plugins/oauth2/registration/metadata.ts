import * as v from 'valibot';
import { ClientCreateSchema, ClientPatchSchema, type ClientRow } from '../schema.ts';
import { invalidMetadata } from './errors.ts';

/**
 * The client metadata a registration request may carry (RFC 7591 §2, and the OpenID logout members).
 * Any other member is ignored (RFC 7591 §2), the service's own ones too (first_party, public, resources,
 * durations, organization_issuer): a client does not choose to skip the consent page. software_statement
 * is ignored as well: this server does not support software statements, which RFC 7591 §3.1.1 allows.
 */
export const REGISTRATION_MEMBERS = [
  'redirect_uris',
  'token_endpoint_auth_method',
  'grant_types',
  'client_name',
  'client_uri',
  'logo_uri',
  'scope',
  'contacts',
  'tos_uri',
  'policy_uri',
  'jwks_uri',
  'jwks',
  'software_id',
  'software_version',
  'post_logout_redirect_uris',
  'backchannel_logout_uri',
  'backchannel_logout_session_required',
] as const;

/** A client that gives no client_name is shown under this one on the consent page. */
export const DEFAULT_CLIENT_NAME = 'Unnamed application';
/** Scopes of a client registered with an initial access token that asks for none. */
export const DEFAULT_SCOPE = 'openid';

type CreateBody = v.InferOutput<typeof ClientCreateSchema>;
type PatchBody = v.InferOutput<typeof ClientPatchSchema>;

/** How the client is being registered. */
export interface RegistrationMode {
  /** Open registration: a public client only, its scopes within `allowedScopes`. */
  open: boolean;
  allowedScopes: readonly string[];
  /** The token_endpoint_auth_method when none is given. */
  defaultMethod: string;
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** The request's known members; a null member is as one left out. */
function known(json: unknown): Record<string, unknown> {
  if (!isObject(json)) throw invalidMetadata('the request body must be a JSON object of client metadata');
  const out: Record<string, unknown> = {};
  for (const m of REGISTRATION_MEMBERS) if (json[m] !== undefined && json[m] !== null) out[m] = json[m];
  return out;
}

/**
 * response_types must be values this server has (code) and agree with grant_types (RFC 7591 §2.1); left
 * out, they follow from grant_types.
 */
function checkResponseTypes(json: Record<string, unknown>, grantTypes: readonly string[]): void {
  const types = json.response_types;
  if (types === undefined || types === null) return;
  if (!Array.isArray(types) || types.some((t) => typeof t !== 'string'))
    throw invalidMetadata('response_types: must be an array of strings');
  const bad = types.find((t) => t !== 'code');
  if (bad !== undefined)
    throw invalidMetadata(
      `response_types: ${JSON.stringify(String(bad).slice(0, 40))} is not supported (only code: the authorization code flow)`,
    );
  const code = types.includes('code');
  const authorizationCode = grantTypes.includes('authorization_code');
  if (code && !authorizationCode)
    throw invalidMetadata(
      'response_types: code needs authorization_code in grant_types (RFC 7591 section 2.1); leave response_types out, or give [], for a client without it',
    );
  if (!code && authorizationCode)
    throw invalidMetadata(
      'response_types: the authorization_code grant needs the code response type (RFC 7591 section 2.1)',
    );
}

/** The first valibot issue as "member: rule", the member first as RFC 7591 names it. */
function firstIssue(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0]!;
  const path = v.getDotPath(issue) ?? 'the request body';
  return `${path}: ${issue.message}`;
}

/** The scopes of the client: for open registration, those asked for that the organization allows. */
function scopeOf(json: Record<string, unknown>, mode: RegistrationMode): string | undefined {
  if (json.scope === undefined) return mode.open ? mode.allowedScopes.join(' ') || undefined : DEFAULT_SCOPE;
  // Not a string: left as it is, for the schema to name the rule.
  if (typeof json.scope !== 'string') return undefined;
  if (!mode.open) return json.scope;
  const allowed = new Set(mode.allowedScopes);
  // RFC 7591 §2: the server may replace what a client asks for; the answer says what it got.
  const granted = json.scope.split(' ').filter((s) => allowed.has(s));
  if (granted.length === 0)
    throw invalidMetadata(
      `scope: none of the scopes asked for is open to open registration in this organization (allowed: ${[...allowed].join(' ') || 'none'})`,
    );
  return [...new Set(granted)].join(' ');
}

/**
 * The body POST /oauth2/clients would take for a registration request: defaults per RFC 7591 §2
 * (grant_types authorization_code, response_types code, the mode's auth method), always a third-party
 * client, validated by the same schema as POST /oauth2/clients. Errors name the member and its rule.
 */
export function registrationBody(
  json: unknown,
  mode: RegistrationMode,
  organizationIssuer: boolean,
): CreateBody {
  const given = known(json);
  // RFC 7591 §2's default; a value that is no array goes to the schema as it is, which names the rule.
  const grantTypes: unknown = given.grant_types ?? ['authorization_code'];
  const method = given.token_endpoint_auth_method ?? mode.defaultMethod;
  if (mode.open) {
    if (method !== 'none')
      throw invalidMetadata(
        `token_endpoint_auth_method: open registration makes public clients only (none, with PKCE); ${JSON.stringify(String(method).slice(0, 40))} needs an initial access token from an administrator`,
      );
    const confidential = (Array.isArray(grantTypes) ? grantTypes : []).find(
      (g) => g === 'client_credentials' || g === 'urn:ietf:params:oauth:grant-type:token-exchange',
    );
    if (confidential !== undefined)
      throw invalidMetadata(
        `grant_types: open registration makes public clients only, which cannot use ${confidential}; it needs an initial access token from an administrator`,
      );
  }
  const scope = scopeOf(given, mode);
  const candidate = {
    ...given,
    client_name: given.client_name ?? DEFAULT_CLIENT_NAME,
    grant_types: grantTypes,
    token_endpoint_auth_method: method,
    ...(scope !== undefined ? { scope } : { scopes: [] }),
    first_party: false,
    organization_issuer: organizationIssuer,
  };
  const parsed = v.safeParse(ClientCreateSchema, candidate);
  if (!parsed.success) throw invalidMetadata(firstIssue(parsed.issues));
  checkResponseTypes(isObject(json) ? json : {}, parsed.output.grant_types);
  return parsed.output;
}

/**
 * RFC 7592 §2.2: a PUT replaces the client's metadata, members left out going back to their defaults;
 * the client's type (public or not), first_party, organization_issuer and resources stay.
 */
export function replacementBody(json: unknown, row: ClientRow, mode: RegistrationMode): PatchBody {
  const body = registrationBody(json, mode, row.organizationIssuer);
  const method = body.token_endpoint_auth_method;
  if (row.tokenEndpointAuthMethod === 'private_key_jwt' && method !== 'private_key_jwt' && method !== 'none')
    throw invalidMetadata(
      `token_endpoint_auth_method: this client was registered without a secret (private_key_jwt), so it cannot move to ${method}; register a new client`,
    );
  const replacement = {
    client_name: body.client_name,
    grant_types: body.grant_types,
    redirect_uris: body.redirect_uris ?? [],
    ...(body.scope !== undefined ? { scope: body.scope } : { scopes: body.scopes ?? [] }),
    ...(method !== undefined ? { token_endpoint_auth_method: method } : {}),
    post_logout_redirect_uris: body.post_logout_redirect_uris ?? [],
    backchannel_logout_uri: body.backchannel_logout_uri ?? null,
    backchannel_logout_session_required: body.backchannel_logout_session_required ?? false,
    jwks: body.jwks ?? null,
    jwks_uri: body.jwks_uri ?? null,
    client_uri: body.client_uri ?? null,
    logo_uri: body.logo_uri ?? null,
    policy_uri: body.policy_uri ?? null,
    tos_uri: body.tos_uri ?? null,
    contacts: body.contacts ?? [],
    software_id: body.software_id ?? null,
    software_version: body.software_version ?? null,
  };
  // Typed through the PATCH schema (which it passes: every member came through the create schema).
  return v.parse(ClientPatchSchema, replacement);
}
