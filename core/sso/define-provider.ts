import type * as v from 'valibot';
import type { GuardedFetch } from '../ports/outbound-requests.ts';

/** What a provider tells the service about the person who signed in. */
export interface SsoProfile {
  /** The provider's stable ID of the account (the ID token's `sub`, GitHub's numeric id, ...). */
  subject: string;
  /** The email address, when the provider gives one. */
  email?: string;
  /** Whether the provider vouches for the email: a person is found or created by a verified email only. */
  emailVerified: boolean;
  name?: string;
  picture?: string;
}

/** A stored credential, opened, as a provider's functions receive it. */
export interface SsoCredentialContext<O> {
  clientId: string;
  /** The client secret as stored (sealed at rest, opened for this call only). */
  clientSecret: string;
  /** The provider's own options of this credential (`tenant`, `organization_url`, `private_key`, ...). */
  options: O;
  /** Seconds since the epoch, from the service's clock. */
  now: number;
}

/** What a provider's `profile` receives: the credential, and the fetch its requests must go through. */
export interface SsoProfileContext<O> extends SsoCredentialContext<O> {
  /**
   * The service's guarded fetch for SSO providers (https only, vetted and pinned addresses, no redirect
   * followed, SSO_ALLOW_PRIVATE for private ranges). A provider's own requests use it, never the global
   * `fetch`: the endpoints may be built from a tenant's options.
   */
  fetch: GuardedFetch;
}

/**
 * A URL, or a function of the credential's options that makes one. Declared as a method's type so a
 * provider with its own options stays assignable to the registry's `SsoProvider<string, unknown>`.
 * The hosted login resolves the authorization endpoint from the public options alone (drawing a page
 * opens no secret), so a URL must not depend on a write-only option (`secretOptions`).
 */
export type FromOptions<O> = string | { fromOptions(options: O): string }['fromOptions'];

/** Where a provider's endpoints are: discovered from an OIDC issuer, or given. */
export type SsoEndpoints<O> =
  | {
      /** The OIDC issuer whose `/.well-known/openid-configuration` names the endpoints and keys. */
      issuer: FromOptions<O>;
      /**
       * For an issuer URL that is an alias or a multi-tenant endpoint (Microsoft Entra's `common`,
       * `organizations`, `consumers` or a tenant's domain), whose discovered metadata names another
       * issuer, possibly a template such as `https://login.microsoftonline.com/{tenantid}/v2.0`: the
       * `iss` an ID token must carry, from the discovered issuer and the token's (unverified) claims.
       * Without it, the discovered issuer must equal the configured one and every ID token's `iss` it.
       */
      idTokenIssuer?(discoveredIssuer: string, claims: Readonly<Record<string, unknown>>): string;
    }
  | {
      authorization: FromOptions<O>;
      token: FromOptions<O>;
      /** For providers without ID tokens: where `profile` fetches the account. */
      userinfo?: FromOptions<O>;
    };

/**
 * An SSO provider: a plain object. One file per built-in provider in `plugins/sso/providers/`; a third
 * party publishes theirs as a package with the same call and lists it in the deployment's `sso({
 * providers })`. The credential's `options.<id>` object is checked against `options`; `authorize_scopes`
 * is common to every provider and handled by the service.
 *
 * @example
 * export const gitlab = defineSsoProvider({
 *   id: 'gitlab', displayName: 'GitLab', defaultScopes: ['read_user'], alwaysScopes: ['read_user'],
 *   options: v.object({}), endpoints: { issuer: 'https://gitlab.com' }, pkce: true,
 * });
 */
export interface SsoProvider<Id extends string = string, O = unknown> {
  /** The `provider` value of credentials, lower-case: `google`, `okta`, `acme-idp`. */
  readonly id: Id;
  readonly displayName: string;
  /** Requested when the credential configures no `authorize_scopes`. */
  readonly defaultScopes: readonly string[];
  /** Requested whatever is configured. */
  readonly alwaysScopes: readonly string[];
  /** The provider's own options (without `authorize_scopes`); messages name the option and the rule. */
  readonly options: v.GenericSchema<unknown, O>;
  readonly endpoints: SsoEndpoints<O>;
  /**
   * Options that are write-only: sealed at rest with the client secret, never returned by a read (Apple's
   * `private_key`). A PATCH that leaves one out keeps the stored value.
   */
  readonly secretOptions?: readonly string[];
  /**
   * A check beyond the schema that needs `await` (a key that must import with crypto.subtle). Returns
   * the problem, naming the option and the rule (`options.apple.private_key: must be ...`), or undefined.
   */
  checkOptions?(options: O): Promise<string | undefined>;
  /** Whether the provider accepts PKCE S256 (then every sign-in uses it). */
  readonly pkce: boolean;
  /** Extra parameters of the authorization request (Apple's `response_mode`, for one). */
  authorizationParams?(options: O): Record<string, string>;
  /** The secret sent to the token endpoint; the stored client secret when absent (Apple makes a JWT). */
  clientSecret?(credential: SsoCredentialContext<O>): Promise<string>;
  /**
   * The profile after the code exchange. OIDC providers need none: the verified ID token's claims give
   * it. Non-OIDC providers (GitHub) fetch it with the access token, through `credential.fetch`.
   */
  profile?(
    tokens: { accessToken: string; idTokenClaims?: Record<string, unknown> },
    credential: SsoProfileContext<O>,
  ): Promise<SsoProfile>;
}

/** Declares an SSO provider, keeping its id and options types. */
export const defineSsoProvider = <const Id extends string, O>(
  provider: SsoProvider<Id, O>,
): SsoProvider<Id, O> => provider;
