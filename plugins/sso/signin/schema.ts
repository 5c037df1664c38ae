import { bigint, index, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import * as v from 'valibot';

/**
 * A sign-in under way, from start to callback: single-use (the callback sets `used_at` only where it is
 * null and reads the row back in one statement) and expiring. A used row is kept until an hour past its
 * expiry so that a replay is recognised (and reported to its organization). Keyed by the SHA-256 of the
 * state, so the table never holds a value that could be presented to the callback.
 */
export const ssoSigninStates = pgTable(
  'sso_signin_states',
  {
    stateHash: text('state_hash').primaryKey(),
    orgId: uuid('org_id').notNull(),
    clientId: text('client_id').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    nonce: text('nonce').notNull(),
    /** The PKCE verifier; empty for a provider without PKCE. */
    codeVerifier: text('code_verifier').notNull(),
    /** The application's own `state`, handed back with the result; empty when it sent none. */
    appState: text('app_state').notNull(),
    /**
     * What another sign-in surface bound this sign-in to (the hosted login's pending authorization
     * request, as the digest of its ID), finished through the ssoAuthenticator capability; null for the
     * application sign-in of GET /sso/oidc/start. A callback only takes states of its own kind.
     */
    binding: text('binding'),
    /**
     * The digest of the cookie GET /sso/oidc/start gave the browser: its callback is taken only with
     * that cookie. Null for a bound sign-in (its login is bound to the browser) and for states made
     * before the column, which no callback takes.
     */
    browserHash: text('browser_hash'),
    /**
     * The redirect URI sent to the provider: the credential's own callback (null only for states made
     * before per-credential callbacks, which no callback takes).
     */
    callbackUrl: text('callback_url'),
    /** Milliseconds since the epoch. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    /** When the callback burnt it (milliseconds since the epoch); null while unused. */
    usedAt: bigint('used_at', { mode: 'number' }),
  },
  (t) => [index('sso_signin_states_expires_idx').on(t.expiresAt)],
);

/** The application redirect URIs an organization allows a sign-in to end at (exact match). */
export const ssoSigninRedirectUris = pgTable(
  'sso_signin_redirect_uris',
  { orgId: uuid('org_id').notNull(), uri: text('uri').notNull() },
  (t) => [primaryKey({ columns: [t.orgId, t.uri] })],
);

const bounded = (field: string, max: number) =>
  v.pipe(
    v.string(`${field} must be a string`),
    v.minLength(1, `${field} must not be empty`),
    v.maxLength(max, `${field} must be at most ${max} characters`),
  );

export const StartQuery = v.object({
  client_id: bounded('client_id', 512),
  redirect_uri: bounded('redirect_uri', 2048),
  state: v.optional(v.pipe(v.string(), v.maxLength(512, 'state must be at most 512 characters'))),
});

export const CallbackParams = v.object({
  callback_id: v.pipe(
    v.string(),
    v.maxLength(64, 'callback_id must be at most 64 characters'),
    v.description("The credential's callback ID, as in its redirect_uri"),
  ),
});

export const CallbackQuery = v.object({
  state: v.optional(v.pipe(v.string(), v.maxLength(512, 'state must be at most 512 characters'))),
  code: v.optional(v.pipe(v.string(), v.maxLength(4096, 'code must be at most 4096 characters'))),
  error: v.optional(v.pipe(v.string(), v.maxLength(256))),
  error_description: v.optional(v.pipe(v.string(), v.maxLength(1024))),
  iss: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});

export const RedirectUrisBody = v.object({
  redirect_uris: v.pipe(
    v.array(bounded('redirect_uris[]', 2048), 'redirect_uris must be an array of URLs'),
    v.maxLength(50, 'redirect_uris must hold at most 50 URLs'),
  ),
});

export const RedirectUrisResult = v.object({ result: v.object({ redirect_uris: v.array(v.string()) }) });
