import * as v from 'valibot';
import { defineSsoProvider, type SsoProvider } from '../../../core/sso/define-provider.ts';
import { isSecureUrl } from '../signin/loopback.ts';

/** Options of one generic OIDC provider of a deployment. */
export interface OidcProviderOptions {
  /** The `provider` value of its credentials, lower-case kebab. @default 'oidc' */
  id?: string;
  /** @default 'OpenID Connect' */
  displayName?: string;
  /**
   * The issuer every credential of this provider uses. When absent, each credential names its own in
   * `options.oidc.issuer` (`options.<id>.issuer`).
   */
  issuer?: string;
  /** Scopes requested when a credential configures no `authorize_scopes`. @default ['openid', 'email', 'profile'] */
  defaultScopes?: string[];
  /**
   * @deprecated Ignored: issuers are https only, on loopback too, since every request to a provider
   * passes the address guard. For a provider on loopback or a private network, serve it over https with
   * a certificate the service trusts (NODE_EXTRA_CA_CERTS) and allow its range with SSO_ALLOW_PRIVATE.
   */
  allowLoopbackIssuer?: boolean;
}

/** A credential's own options of a generic OIDC provider. */
export interface OidcCredentialOptions {
  issuer?: string | undefined;
}

const ID = /^[a-z][a-z0-9-]{0,62}$/;

/**
 * A generic OpenID Connect provider: endpoints and keys discovered from the issuer's
 * `/.well-known/openid-configuration`, PKCE S256, the ID token verified against the issuer's JWKS.
 * List it once per identity provider under its own id:
 *
 * @example
 * sso({ providers: [...builtInProviders, oidcProvider({ id: 'acme', displayName: 'Acme', issuer: 'https://id.acme.example' })] })
 * // or one provider whose credentials each name an issuer: oidcProvider() and options: { oidc: { issuer } }
 */
export function oidcProvider(o: OidcProviderOptions = {}): SsoProvider<string, OidcCredentialOptions> {
  const id = o.id ?? 'oidc';
  if (!ID.test(id))
    throw new Error(`oidcProvider: id must be lower-case letters, digits and - (got "${id}")`);
  const rule = 'must be an https URL without credentials, query or fragment';
  // Plain http, loopback included: the discovery document and keys would travel unauthenticated.
  const issuerOk = (s: string) => isSecureUrl(s, false) && !new URL(s).search;
  if (o.issuer !== undefined && !issuerOk(o.issuer))
    throw new Error(`oidcProvider(${id}): issuer ${rule} (got "${o.issuer}")`);
  const fixed = o.issuer;
  const issuerSchema = v.pipe(v.string(`issuer ${rule}`), v.check(issuerOk, `issuer ${rule}`));

  return defineSsoProvider({
    id,
    displayName: o.displayName ?? 'OpenID Connect',
    defaultScopes: o.defaultScopes ?? ['openid', 'email', 'profile'],
    alwaysScopes: ['openid'],
    // A fixed issuer leaves nothing to configure; otherwise each credential must name its issuer.
    options: fixed
      ? v.object({ issuer: v.optional(v.literal(fixed, `issuer is fixed by the deployment to ${fixed}`)) })
      : v.object({ issuer: issuerSchema }),
    endpoints: {
      issuer: {
        fromOptions: (options: OidcCredentialOptions) => {
          const issuer = fixed ?? options.issuer;
          if (!issuer) throw new Error(`the ${id} credential names no issuer`);
          return issuer;
        },
      }.fromOptions,
    },
    pkce: true,
  });
}

/** The generic OIDC provider with per-credential issuers (`options.oidc.issuer`), https only. */
export const oidc = oidcProvider();
