import { bigint, index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';

// Every secret a browser or client holds (login transaction, code, refresh token) is stored as its
// SHA-256 only, so the tables never hold a value that could be presented back.

/**
 * A login under way: the authorization request as validated by GET /oauth2/authorize, waiting for the
 * hosted form. Single-use (the successful submission burns it) and expiring. `browser_hash` binds it to
 * the browser that opened it (the digest of its httpOnly cookie): the CSRF defence of the form.
 */
export const oauth2AuthorizeLogins = pgTable(
  'oauth2_authorize_logins',
  {
    loginHash: text('login_hash').primaryKey(),
    browserHash: text('browser_hash').notNull(),
    orgId: uuid('org_id').notNull(),
    clientId: text('client_id').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    /** Space-delimited. */
    scope: text('scope').notNull(),
    /** The client's state, echoed as sent; null when it sent none. */
    state: text('state'),
    nonce: text('nonce'),
    /** The PKCE S256 challenge; null when the (confidential) client sent none. */
    codeChallenge: text('code_challenge'),
    /** The resource asked for (RFC 8707), one of the client's; null: the organization's own audience. */
    resource: text('resource'),
    /** `form_post` to answer with an auto-submitting form; null: the query (the default). */
    responseMode: text('response_mode'),
    /** The client's issuer (RFC 9207 `iss` of the answer); null: the deployment's. */
    issuer: text('issuer'),
    /** The OIDC `claims` parameter as checked (JSON); null when none was sent. */
    claims: text('claims'),
    /** `acr_values`, space-delimited; null when none was sent. */
    acrValues: text('acr_values'),
    /** `prompt`, space-delimited as checked; null when none was sent. */
    prompt: text('prompt'),
    /**
     * The session this login signed in (or found) while a consent page waits: the consent's answer must
     * come with that session's cookie.
     */
    sessionId: uuid('session_id'),
    /**
     * A sign-in waiting for its second factor: JSON `{personId, factors, idp?}` of the first factor that
     * succeeded; null for a login that has not signed anyone in yet.
     */
    pending: text('pending'),
    /** Milliseconds since the epoch. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    usedAt: bigint('used_at', { mode: 'number' }),
    /** The DPoP key the code is to be bound to (RFC 9449 §10, `dpop_jkt`); null: none. */
    dpopJkt: text('dpop_jkt'),
  },
  (t) => [index('oauth2_authorize_logins_expires_idx').on(t.expiresAt)],
);

/**
 * Authorization codes: single-use, 60 s, bound to the client, redirect URI, PKCE challenge, scope and
 * person. The ID token minted at the login (the token_minted hook ran then) waits here sealed. A used
 * code is kept until the tokens it issued have expired, so that a replay is recognised and revokes them.
 */
export const oauth2AuthorizeCodes = pgTable(
  'oauth2_authorize_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    orgId: uuid('org_id').notNull(),
    clientId: text('client_id').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    scope: text('scope').notNull(),
    codeChallenge: text('code_challenge'),
    /** The resource of the authorization request (RFC 8707); null: the organization's own audience. */
    resource: text('resource'),
    /** The OIDC `claims` parameter of the request (JSON), for userinfo and refreshed ID tokens. */
    claims: text('claims'),
    personId: text('person_id').notNull(),
    /** The login's time, seconds since the epoch (auth_time). */
    authTime: bigint('auth_time', { mode: 'number' }).notNull(),
    /** The family its tokens belong to (made with the code, so a replay can revoke it at any moment). */
    familyId: uuid('family_id').notNull(),
    /** The ID token, sealed by the SecretBox with the context `oauth2-authorize:code:<code_hash>`. */
    idToken: text('id_token').notNull(),
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    usedAt: bigint('used_at', { mode: 'number' }),
    /** The access token the exchange issued, to revoke on a replay. */
    accessJti: text('access_jti'),
    /** Its expiry, seconds since the epoch. */
    accessExp: bigint('access_exp', { mode: 'number' }),
    /**
     * The JWK thumbprint of the DPoP key the authorization request bound the code to (RFC 9449 §10:
     * `dpop_jkt`, or the proof of its pushed request): the exchange needs a proof by that key. Null: none.
     */
    dpopJkt: text('dpop_jkt'),
  },
  (t) => [index('oauth2_authorize_codes_expires_idx').on(t.expiresAt)],
);

/**
 * Pushed authorization requests (RFC 9126): the parameters a client pushed to POST /oauth2/par, checked
 * as the authorization endpoint checks them, waiting for the authorization request that names them by
 * `request_uri`. Kept as the SHA-256 of the request_uri's random part; single-use (`used_at`) and
 * short-lived. In the database, so that whichever replica the browser reaches finds it.
 */
export const oauth2AuthorizePushedRequests = pgTable(
  'oauth2_authorize_pushed_requests',
  {
    requestHash: text('request_hash').primaryKey(),
    orgId: uuid('org_id').notNull(),
    clientId: text('client_id').notNull(),
    /** The authorization request's parameters as pushed (a JSON object of strings), client_id included. */
    params: text('params').notNull(),
    /** Milliseconds since the epoch. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    usedAt: bigint('used_at', { mode: 'number' }),
  },
  (t) => [index('oauth2_authorize_pushed_requests_expires_idx').on(t.expiresAt)],
);

/**
 * A grant to a client on behalf of a person: what one login produced, across every refresh. Revoking
 * it (a replayed code, a reused refresh token, RFC 7009 revocation) ends every refresh token in it.
 */
export const oauth2AuthorizeFamilies = pgTable(
  'oauth2_authorize_families',
  {
    familyId: uuid('family_id').primaryKey(),
    orgId: uuid('org_id').notNull(),
    clientId: text('client_id').notNull(),
    personId: text('person_id').notNull(),
    /** The scope granted at the login: a refresh may narrow it, never widen it. */
    scope: text('scope').notNull(),
    /** `authenticated_methods` of the login, space-delimited. */
    methods: text('methods').notNull(),
    /**
     * The resource (RFC 8707) its access tokens are for, kept by every refresh; null: the
     * organization's own audience.
     */
    resource: text('resource'),
    /** The OIDC `claims` parameter of the login (JSON): refreshed ID tokens and userinfo honour it. */
    claims: text('claims'),
    /** The sign-in session the grant came from (`sid`); null for grants made before sessions. */
    sessionId: uuid('session_id'),
    /** The login's time, seconds since the epoch (auth_time). */
    authTime: bigint('auth_time', { mode: 'number' }).notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    revokedAt: bigint('revoked_at', { mode: 'number' }),
    /**
     * The generation of the family's current refresh tokens: a refresh (not one within the grace window)
     * moves it on, and every unspent token of an older generation is then spent as of `superseded_at`.
     * Two answers to one token reused within the window are one generation, so using either ends the
     * other: the family stays one chain.
     */
    generation: integer('generation').notNull().default(0),
    /** When `generation` last moved on (milliseconds since the epoch). */
    supersededAt: bigint('superseded_at', { mode: 'number' }),
    /**
     * The JWK SHA-256 thumbprint of the DPoP key its refresh tokens are bound to (RFC 9449 §5: a public
     * client's, when it sent a proof); null: not bound.
     */
    dpopJkt: text('dpop_jkt'),
  },
  (t) => [index('oauth2_authorize_families_person_idx').on(t.orgId, t.personId)],
);

/**
 * Refresh tokens: opaque, 256 random bits, rotated on every use. `spent_at` marks one used; a second
 * use past the grace window revokes its family.
 */
export const oauth2AuthorizeRefreshTokens = pgTable(
  'oauth2_authorize_refresh_tokens',
  {
    tokenHash: text('token_hash').primaryKey(),
    familyId: uuid('family_id').notNull(),
    issuedAt: bigint('issued_at', { mode: 'number' }).notNull(),
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    spentAt: bigint('spent_at', { mode: 'number' }),
    /** The access token issued with it, revoked with its family. */
    accessJti: text('access_jti').notNull(),
    accessExp: bigint('access_exp', { mode: 'number' }).notNull(),
    /** The family's generation when it was issued: older than the family's, it was superseded. */
    generation: integer('generation').notNull().default(0),
  },
  (t) => [
    index('oauth2_authorize_refresh_family_idx').on(t.familyId),
    index('oauth2_authorize_refresh_expires_idx').on(t.expiresAt),
  ],
);

/**
 * A sign-in session of the hosted login: one browser's sign-in to one organization, named by an
 * HttpOnly cookie whose value is stored here as its SHA-256 only. While it lives, another client of the
 * organization gets a code without a page. `session_id` is public: the `sid` of ID tokens and logout
 * tokens, and the ID of the person's sessions API. Ended sessions are deleted.
 */
export const oauth2AuthorizeSessions = pgTable(
  'oauth2_authorize_sessions',
  {
    sessionId: uuid('session_id').primaryKey(),
    secretHash: text('secret_hash').notNull().unique(),
    orgId: uuid('org_id').notNull(),
    personId: text('person_id').notNull(),
    /** The factors of the sign-in, in order: JSON `[{method, at, handle}]` (`at` in seconds). */
    factors: text('factors').notNull(),
    /** When the person last authenticated, seconds since the epoch (auth_time). */
    authTime: bigint('auth_time', { mode: 'number' }).notNull(),
    /** Milliseconds since the epoch. */
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    /** The last authorization it answered (milliseconds): the idle lifetime counts from here. */
    lastSeenAt: bigint('last_seen_at', { mode: 'number' }).notNull(),
    /** The absolute end (milliseconds): the creation plus the absolute lifetime. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    /** What the browser said at the sign-in, for the person's sessions list. */
    userAgent: text('user_agent'),
    ipAddress: text('ip_address'),
  },
  (t) => [
    index('oauth2_authorize_sessions_person_idx').on(t.orgId, t.personId),
    index('oauth2_authorize_sessions_expires_idx').on(t.expiresAt),
  ],
);

/** The clients a session has served: whom its logout tells (back-channel logout). */
export const oauth2AuthorizeSessionClients = pgTable(
  'oauth2_authorize_session_clients',
  {
    sessionId: uuid('session_id').notNull(),
    clientId: text('client_id').notNull(),
    /** Milliseconds since the epoch. */
    firstAt: bigint('first_at', { mode: 'number' }).notNull(),
    lastAt: bigint('last_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.clientId] })],
);

/**
 * What a person allowed a third-party client (first_party false) on the consent page: the scopes it may
 * be granted without asking again. Granting more adds to them; revoking deletes the row (and the
 * person's grants to the client). Not the GDPR consents of the consents plugin.
 */
export const oauth2AuthorizeConsents = pgTable(
  'oauth2_authorize_consents',
  {
    orgId: uuid('org_id').notNull(),
    personId: text('person_id').notNull(),
    clientId: text('client_id').notNull(),
    /** Space-delimited, sorted, without repeats. */
    scopes: text('scopes').notNull(),
    /** Milliseconds since the epoch: the first consent. */
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    /** Milliseconds since the epoch: the last consent that added scopes (or the first). */
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.personId, t.clientId] })],
);

/**
 * Device authorizations (RFC 8628): the device polls with its device code, the person enters the user
 * code at GET /oauth2/device, signs in through the hosted login (whose code the device page redeems),
 * then approves or denies. Both codes are stored as digests. `status`: pending, approved, denied,
 * issued (the tokens were answered once). `login_state_hash` binds the hosted login's answer, and
 * `csrf_hash` the approval form, to `browser_hash`, the browser that entered the code. The ID token
 * minted at the sign-in waits sealed with the context `oauth2-authorize:device:<device_code_hash>`.
 */
export const oauth2AuthorizeDevices = pgTable(
  'oauth2_authorize_devices',
  {
    deviceCodeHash: text('device_code_hash').primaryKey(),
    userCodeHash: text('user_code_hash').notNull().unique(),
    orgId: uuid('org_id').notNull(),
    clientId: text('client_id').notNull(),
    /** Space-delimited. */
    scope: text('scope').notNull(),
    status: text('status').notNull(),
    /** Seconds between polls; grows by 5 at each slow_down. */
    interval: integer('interval').notNull(),
    /** Milliseconds since the epoch. */
    lastPolledAt: bigint('last_polled_at', { mode: 'number' }),
    browserHash: text('browser_hash'),
    loginStateHash: text('login_state_hash'),
    csrfHash: text('csrf_hash'),
    personId: text('person_id'),
    sessionId: uuid('session_id'),
    familyId: uuid('family_id'),
    /** Seconds since the epoch. */
    authTime: bigint('auth_time', { mode: 'number' }),
    idToken: text('id_token'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    index('oauth2_authorize_devices_expires_idx').on(t.expiresAt),
    index('oauth2_authorize_devices_state_idx').on(t.loginStateHash),
    index('oauth2_authorize_devices_csrf_idx').on(t.csrfHash),
  ],
);
