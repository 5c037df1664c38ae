import { bigint, boolean, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import * as v from 'valibot';
import type { OAuthClientUiConfiguration } from '../../core/capabilities/oauth2-server.ts';
import { metadataCreateEntries, metadataPatchEntries, metadataResponseEntries } from './clients/metadata.ts';

/**
 * OAuth 2.0 clients. The client ID is the key across the deployment: the token endpoint finds the
 * organization from it. The secret is kept only as its SHA-256 digest (hex); public clients have none.
 */
export const oauth2Clients = pgTable(
  'oauth2_clients',
  {
    clientId: uuid('client_id').primaryKey(),
    orgId: uuid('org_id').notNull(),
    name: text('name').notNull(),
    public: boolean('public').notNull().default(false),
    grantTypes: jsonb('grant_types').$type<string[]>().notNull(),
    redirectUris: jsonb('redirect_uris').$type<string[]>().notNull(),
    scopes: jsonb('scopes').$type<string[]>().notNull(),
    /** Seconds; null: the deployment's default (OAUTH2_ACCESS_TOKEN_LIFETIME). */
    accessTokenDuration: integer('access_token_duration'),
    /** Seconds; null: the deployment's default (OAUTH2_REFRESH_TOKEN_LIFETIME). */
    refreshTokenDuration: integer('refresh_token_duration'),
    secretDigest: text('secret_digest'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
    /** When the token endpoint last authenticated it, recorded coarsely (at most once a minute). */
    lastUsedAt: bigint('last_used_at', { mode: 'number' }),
    /** The hosted-UI configuration (PUT .../ui-configuration), validated when written; null: never set. */
    uiConfiguration: jsonb('ui_configuration').$type<OAuthClientUiConfiguration>(),
    /** The resources (RFC 8707) its access tokens may be for, exact URIs; []: its organization's only. */
    resources: jsonb('resources').$type<string[]>().notNull().default([]),
    /** Where RP-Initiated Logout may send the browser back to, exact URIs; []: nowhere. */
    postLogoutRedirectUris: jsonb('post_logout_redirect_uris').$type<string[]>().notNull().default([]),
    /** Where Back-Channel Logout tokens are posted; null: the client gets none. */
    backchannelLogoutUri: text('backchannel_logout_uri'),
    /** Whether its logout tokens must carry `sid` (Back-Channel Logout 1.0 §2.2). */
    backchannelLogoutSessionRequired: boolean('backchannel_logout_session_required').notNull().default(false),
    /** The organization's own app (no consent page); false: a third party, asked consent for. */
    firstParty: boolean('first_party').notNull().default(true),
    /**
     * How it authenticates at the token endpoint (RFC 7591 names); null: the default of its type,
     * `none` for public clients, `client_secret_basic` (Basic or the form alike) for confidential ones.
     */
    tokenEndpointAuthMethod: text('token_endpoint_auth_method'),
    /** Its public keys (a JWK Set) for private_key_jwt; null: none given inline. */
    jwks: jsonb('jwks').$type<{ keys: Record<string, unknown>[] }>(),
    /** Where its public keys are served (https); null: none. Never set together with `jwks`. */
    jwksUri: text('jwks_uri'),
    /**
     * A client_secret_jwt client's secret sealed with the SecretBox (context `oauth2-client-secret:<id>`):
     * the HMAC key of its assertions, which a digest cannot check. Null for every other method.
     */
    secretSealed: text('secret_sealed'),
    clientUri: text('client_uri'),
    logoUri: text('logo_uri'),
    policyUri: text('policy_uri'),
    tosUri: text('tos_uri'),
    contacts: jsonb('contacts').$type<string[]>().notNull().default([]),
    softwareId: text('software_id'),
    softwareVersion: text('software_version'),
    /**
     * Whether its tokens carry its organization's own issuer (`{PUBLIC_BASE_URL}/oauth2/organizations/{oid}`)
     * rather than the deployment's: see core/tokens/issuers.ts.
     */
    organizationIssuer: boolean('organization_issuer').notNull().default(false),
    /** RFC 9126 §6: its authorization requests must be pushed (POST /oauth2/par) first. */
    requirePushedAuthorizationRequests: boolean('require_pushed_authorization_requests')
      .notNull()
      .default(false),
    /** RFC 9449 §5.2: every token request of the client must carry a DPoP proof. */
    dpopBoundAccessTokens: boolean('dpop_bound_access_tokens').notNull().default(false),
  },
  (t) => [index('oauth2_clients_org_idx').on(t.orgId, t.clientId)],
);

export type ClientRow = typeof oauth2Clients.$inferSelect;

/** Access tokens revoked before their expiry, by jti; rows past expires_at are swept. */
export const oauth2RevokedTokens = pgTable(
  'oauth2_revoked_tokens',
  {
    jti: uuid('jti').primaryKey(),
    orgId: uuid('org_id').notNull(),
    clientId: uuid('client_id').notNull(),
    /** Milliseconds since the epoch: the token's exp. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    revokedAt: bigint('revoked_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('oauth2_revoked_tokens_expires_idx').on(t.expiresAt)],
);

/**
 * Client assertions (RFC 7523) already used, by the SHA-256 of their client ID and jti (hex), kept until
 * the assertion's exp so every replica refuses a second use; rows past expires_at are swept.
 */
export const oauth2ClientAssertions = pgTable(
  'oauth2_client_assertions',
  {
    jtiHash: text('jti_hash').primaryKey(),
    /** Milliseconds since the epoch: the assertion's exp. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('oauth2_client_assertions_expires_idx').on(t.expiresAt)],
);

/**
 * DPoP proofs seen (RFC 9449 §11.1), by the SHA-256 of their key's thumbprint and jti: a proof is taken
 * once across every replica. Rows past expires_at (when the proof's iat is out of the window) are swept.
 */
export const oauth2DpopProofs = pgTable(
  'oauth2_dpop_proofs',
  {
    proofKey: text('proof_key').primaryKey(),
    /** Milliseconds since the epoch. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('oauth2_dpop_proofs_expires_idx').on(t.expiresAt)],
);

// Dynamic registration's tables (RFC 7591, 7592), kept beside their code; exported here for migrations.
export {
  oauth2RegisteredClients,
  oauth2RegistrationPolicies,
  oauth2RegistrationTokens,
} from './registration/tables.ts';

// ---------------------------------------------------------------------------------------------------
// The API's shapes (docs/spec/reference/oauth2.openapi.yml: OAuth2Client, PostOAuth2ClientRequest, ...).

/** The grant types a client may be allowed. */
export const GRANT_TYPES = [
  'client_credentials',
  'authorization_code',
  'refresh_token',
  'urn:ietf:params:oauth:grant-type:device_code',
  'urn:ietf:params:oauth:grant-type:token-exchange',
] as const;

/** RFC 6749 §3.3 scope-token: NQCHAR, %x21 / %x23-5B / %x5D-7E. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** Access tokens live at most a day, well inside the Signer's 7-day grace for replaced keys. */
export const MAX_ACCESS_TOKEN_SECONDS = 86_400;
/** Refresh tokens live at most a year. */
export const MAX_REFRESH_TOKEN_SECONDS = 31_536_000;

/** Postgres text cannot hold U+0000. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it refuses
const noNul = v.regex(/^[^\u0000]*$/, 'must not contain the NUL character (\\u0000)');

/** Hosts an http URL may name (redirect URIs, hosted-UI links): loopback only. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why a redirect URI is refused, or undefined: absolute https, or http on a loopback host; no fragment. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.includes('#')) return 'must not contain a fragment (#)';
  if (/\s/.test(uri)) return 'must not contain white space';
  // The WHATWG parser reads a backslash as a slash, others as part of the authority: one string, two hosts.
  if (uri.includes('\\')) return 'must not contain a backslash (\\)';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.protocol === 'https:') return url.hostname ? undefined : 'must name a host';
  if (url.protocol === 'http:')
    return LOOPBACK_HOSTS.has(url.hostname)
      ? undefined
      : 'must use https (http only on a loopback host: 127.0.0.1, [::1] or localhost)';
  return `must use https (got the scheme ${url.protocol.slice(0, -1)})`;
}

/**
 * Why a resource indicator is refused, or undefined: an absolute URI without a fragment (RFC 8707 §2).
 * Whether it is the service's own audience is the client rules' to say (they know PUBLIC_BASE_URL).
 */
export function resourceProblem(uri: string): string | undefined {
  if (uri.includes('#')) return 'must not contain a fragment (#) (RFC 8707 section 2)';
  if (/\s/.test(uri)) return 'must not contain white space';
  if (uri.includes('\\')) return 'must not contain a backslash (\\)';
  try {
    new URL(uri);
  } catch {
    return 'must be an absolute URI (RFC 8707 section 2)';
  }
  return undefined;
}

const clientName = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(256, 'must be at most 256 characters'),
  noNul,
  v.description('Human-friendly name to identify this client.'),
);
const scopes = v.pipe(
  v.array(
    v.pipe(
      v.string('must be a string'),
      v.maxLength(128, 'must be at most 128 characters'),
      v.regex(SCOPE_TOKEN, 'must be a scope token: visible ASCII except space, " and \\ (RFC 6749 §3.3)'),
    ),
    'must be an array of scopes',
  ),
  v.maxLength(100, 'must list at most 100 scopes'),
  v.description(
    'The scopes this client may be granted. Duplicates are dropped. Required, unless scope (the RFC 7591 string) gives them.',
  ),
);
const grantTypes = v.pipe(
  v.array(
    v.picklist(GRANT_TYPES, `must be one of ${GRANT_TYPES.join(', ')}`),
    'must be an array of grant types',
  ),
  v.minLength(1, 'must list at least one grant type'),
  v.description(
    'Grants the client may use: client_credentials (confidential clients only), authorization_code, refresh_token (with authorization_code or the device grant), urn:ietf:params:oauth:grant-type:device_code (RFC 8628), urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693; confidential clients only).',
  ),
);
/** One redirect URI: at most 2000 characters, refused by `redirectUriProblem` with its reason. */
const redirectUri = v.pipe(
  v.string('must be a string'),
  v.maxLength(2000, 'must be at most 2000 characters'),
  v.check(
    (u) => redirectUriProblem(u) === undefined,
    (i) => redirectUriProblem(String(i.input))!,
  ),
);
/** At most this many redirect URIs, and as many post-logout redirect URIs. */
export const MAX_REDIRECT_URIS = 20;
/** A list of redirect URIs (redirect_uris, post_logout_redirect_uris): each checked as one, at most 20. */
const redirectUriList = (what: string, description: string) =>
  v.pipe(
    v.array(redirectUri, 'must be an array of URLs'),
    v.maxLength(MAX_REDIRECT_URIS, `must list at most ${MAX_REDIRECT_URIS} ${what}`),
    v.description(description),
  );
const redirectUris = redirectUriList(
  'redirect URIs',
  'Exact-match redirect URIs: https, or http on a loopback host (127.0.0.1, [::1], localhost); no fragment.',
);
const postLogoutRedirectUris = redirectUriList(
  'post-logout redirect URIs',
  'Where RP-Initiated Logout may send the browser back to (its post_logout_redirect_uri, matched exactly), checked as redirect_uris are: https, or http on a loopback host (127.0.0.1, [::1], localhost); no fragment. Duplicates are dropped. Default [].',
);
const backchannelLogoutUri = v.pipe(
  redirectUri,
  v.description(
    'Where Back-Channel Logout 1.0 logout tokens are posted when a session of this client ends: an absolute URL checked as a redirect URI is (https, or http on a loopback host; no fragment, OpenID Back-Channel Logout 1.0 section 2.2). Null or absent: none; a PATCH with null removes it.',
  ),
);
const backchannelLogoutSessionRequired = v.pipe(
  v.boolean('must be true or false'),
  v.description(
    'Whether the client needs the session ID (sid) in its logout tokens (Back-Channel Logout 1.0 section 2.2). Default false.',
  ),
);
const firstParty = v.pipe(
  v.boolean('must be true or false'),
  v.description(
    "True: the organization's own app, signed in without a consent page. False: a third-party app, shown a consent page naming it and the scopes it asks for. Default true.",
  ),
);
const organizationIssuerFlag = v.pipe(
  v.boolean('must be true or false'),
  v.description(
    "True: the client's tokens and authorization responses carry its organization's own issuer, PUBLIC_BASE_URL/oauth2/organizations/<organization ID> (whose metadata lists the organization's registration endpoint); false: the deployment's, PUBLIC_BASE_URL. Default false (true for clients registered at the organization's registration endpoint). Changing it changes the iss of the tokens issued from then on.",
  ),
);
const resources = v.pipe(
  v.array(
    v.pipe(
      v.string('must be a string'),
      v.maxLength(2000, 'must be at most 2000 characters'),
      v.check(
        (u) => resourceProblem(u) === undefined,
        (i) => resourceProblem(String(i.input))!,
      ),
    ),
    'must be an array of URIs',
  ),
  v.maxLength(20, 'must list at most 20 resources'),
  v.description(
    "Resource indicators (RFC 8707) the client may ask for with `resource`, each the `aud` of the access tokens asked for it: absolute URIs without a fragment, matched exactly; none under this service's PUBLIC_BASE_URL (every organization's own audience is there). A `resource` not listed is invalid_target. Without `resource`, a token's aud is the organization's own: PUBLIC_BASE_URL/organizations/<organization ID>. Duplicates are dropped.",
  ),
);
const duration = (max: number, what: string) =>
  v.pipe(
    v.number('must be an integer number of seconds'),
    v.integer('must be an integer number of seconds'),
    v.minValue(60, 'must be at least 60 seconds'),
    v.maxValue(max, `must be at most ${max} seconds`),
    v.description(`How long ${what} live, in seconds; null or absent: the deployment's default.`),
  );
const accessDuration = duration(MAX_ACCESS_TOKEN_SECONDS, 'access tokens');
const refreshDuration = duration(MAX_REFRESH_TOKEN_SECONDS, 'refresh tokens');

/** Members not in `entries` are refused, each by name; a missing required member "is required". */
const exactly = <E extends v.ObjectEntries>(entries: E, what: string) =>
  v.objectWithRest(
    entries,
    v.never(`is not a member ${what} (accepted: ${Object.keys(entries).join(', ')})`),
    'is required',
  );

export const ClientCreateSchema = exactly(
  {
    client_name: clientName,
    scopes: v.optional(scopes),
    grant_types: grantTypes,
    redirect_uris: v.optional(redirectUris),
    resources: v.optional(resources),
    post_logout_redirect_uris: v.optional(postLogoutRedirectUris),
    backchannel_logout_uri: v.optional(v.nullable(backchannelLogoutUri)),
    backchannel_logout_session_required: v.optional(backchannelLogoutSessionRequired),
    first_party: v.optional(firstParty),
    organization_issuer: v.optional(organizationIssuerFlag),
    access_token_duration: v.optional(v.nullable(accessDuration)),
    refresh_token_duration: v.optional(v.nullable(refreshDuration)),
    public: v.optional(
      v.pipe(
        v.boolean('must be true or false'),
        v.description(
          'A public client has no secret (browser and native apps) and must use PKCE. Default: true when token_endpoint_auth_method is none, else false.',
        ),
      ),
    ),
    ...metadataCreateEntries,
  },
  'of an OAuth 2.0 client',
);

export const ClientPatchSchema = exactly(
  {
    client_name: v.optional(clientName),
    scopes: v.optional(scopes),
    grant_types: v.optional(grantTypes),
    redirect_uris: v.optional(redirectUris),
    resources: v.optional(resources),
    post_logout_redirect_uris: v.optional(postLogoutRedirectUris),
    backchannel_logout_uri: v.optional(v.nullable(backchannelLogoutUri)),
    backchannel_logout_session_required: v.optional(backchannelLogoutSessionRequired),
    first_party: v.optional(firstParty),
    organization_issuer: v.optional(organizationIssuerFlag),
    access_token_duration: v.optional(v.nullable(accessDuration)),
    refresh_token_duration: v.optional(v.nullable(refreshDuration)),
    ...metadataPatchEntries,
  },
  'a PATCH may change',
);

export const ClientSchema = v.object({
  client_id: v.string(),
  client_name: v.string(),
  grant_types: v.array(v.string()),
  response_types: v.pipe(
    v.array(v.array(v.string())),
    v.description('[["code"]] for clients with authorization_code, else [].'),
  ),
  scopes: v.array(v.string()),
  access_token_duration: v.number(),
  refresh_token_duration: v.number(),
  public: v.boolean(),
  redirect_uris: v.array(v.string()),
  resources: v.pipe(
    v.array(v.string()),
    v.description(
      "Resource indicators (RFC 8707) the client may ask for; [] when only its organization's own audience.",
    ),
  ),
  post_logout_redirect_uris: v.pipe(
    v.array(v.string()),
    v.description('Where RP-Initiated Logout may send the browser back to; [] when nowhere.'),
  ),
  backchannel_logout_uri: v.optional(
    v.pipe(v.string(), v.description('Where logout tokens are posted; absent when none.')),
  ),
  backchannel_logout_session_required: v.pipe(
    v.boolean(),
    v.description('Whether its logout tokens carry sid.'),
  ),
  first_party: v.pipe(
    v.boolean(),
    v.description("True: the organization's own app, no consent page; false: a third party, asked consent."),
  ),
  organization_issuer: v.pipe(
    v.boolean(),
    v.description("Whether its tokens carry its organization's own issuer (see issuer)."),
  ),
  issuer: v.pipe(v.string(), v.description('The iss of its tokens and authorization responses.')),
  ...metadataResponseEntries,
  created_at: v.string(),
  last_used: v.optional(v.pipe(v.string(), v.description('Recorded at most once a minute.'))),
});

export const ClientWithSecretSchema = v.object({
  ...ClientSchema.entries,
  client_secret: v.optional(
    v.pipe(
      v.string(),
      v.description('Shown once: only the SHA-256 digest is kept. Absent for public clients.'),
    ),
  ),
});

export const SecretSchema = v.object({ client_secret: v.string() });

export const ClientIdParams = v.object({ oauth_client_id: v.string() });
