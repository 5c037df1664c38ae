import * as v from 'valibot';
import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { profileFromClaims, strictOptions } from './common.ts';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A DNS name of at least two labels (contoso.onmicrosoft.com, contoso.com). */
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/i;
const PSEUDO = ['common', 'organizations', 'consumers'];

export const azureadOptions = strictOptions(
  {
    tenant: v.optional(
      v.pipe(
        v.string('must be a string'),
        // The spec spells the pseudo tenant `consumer`; Microsoft's authority is `consumers`.
        v.transform((t) => (t === 'consumer' ? 'consumers' : t)),
        v.check(
          (t) => PSEUDO.includes(t) || GUID.test(t) || DOMAIN.test(t),
          'must be a tenant GUID, a tenant domain, or one of common, organizations, consumers',
        ),
      ),
      'common',
    ),
  },
  'azuread',
);

/**
 * The `iss` of an Entra ID token: the discovered issuer with the token's tenant (`tid`) in place of the
 * `{tenantid}` template that `common` and `organizations` publish. A tenant's domain or `consumers`
 * discovers its tenant's own issuer, which holds no template and is then required as it stands.
 */
export function entraIdTokenIssuer(discovered: string, claims: Readonly<Record<string, unknown>>): string {
  if (!discovered.includes('{tenantid}')) return discovered;
  const tid = claims.tid;
  // Without a GUID tenant the template stays unfilled and no token's `iss` can equal it.
  return typeof tid === 'string' && GUID.test(tid) ? discovered.replace('{tenantid}', tid) : discovered;
}

/** Microsoft Entra ID (Azure AD), v2.0 endpoints: an OIDC issuer per tenant. */
export const azuread = defineSsoProvider({
  id: 'azuread',
  displayName: 'Microsoft Entra ID (Azure AD)',
  defaultScopes: ['openid', 'email', 'profile', 'User.Read'],
  alwaysScopes: ['openid', 'email', 'profile', 'User.Read'],
  options: azureadOptions,
  endpoints: {
    issuer: (o) => `https://login.microsoftonline.com/${o.tenant}/v2.0`,
    idTokenIssuer: entraIdTokenIssuer,
  },
  pkce: true,
  // Entra's `email` claim is whatever the account says, not a verified address; only `xms_edov` (the
  // email domain's owner verified it) makes it one.
  profile: async ({ idTokenClaims }) => ({
    ...profileFromClaims(idTokenClaims),
    emailVerified: idTokenClaims?.xms_edov === true || idTokenClaims?.xms_edov === '1',
  }),
});
