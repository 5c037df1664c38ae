import type { SsoProvider } from '../../../../core/sso/define-provider.ts';
import {
  credentialRedirectUri,
  HOSTED_LOGIN_CALLBACK_PATH,
  SIGN_IN_CALLBACK_PATH,
} from '../../../../core/sso/redirect-uris.ts';
import type { SsoCredentialRow } from '../../schema.ts';
import { effectiveScopes } from '../scopes.ts';

/** A credential as the API shows it: never the client secret nor a write-only option. */
export function toCredentialResponse(
  row: SsoCredentialRow,
  provider: SsoProvider | undefined,
  baseUrl: string,
) {
  const own: Record<string, unknown> = { ...row.options };
  if (row.authorizeScopes) own.authorize_scopes = row.authorizeScopes;
  return {
    client_id: row.clientId,
    provider: row.provider,
    label: row.label,
    external_cred_id: row.externalCredId,
    enable_in_service_oidc_authz_server: row.enableInAuthzServer,
    options: { [row.provider]: own },
    redirect_uri: credentialRedirectUri(baseUrl, SIGN_IN_CALLBACK_PATH, row.callbackId),
    hosted_login_redirect_uri: credentialRedirectUri(baseUrl, HOSTED_LOGIN_CALLBACK_PATH, row.callbackId),
    // A credential of a provider the deployment no longer lists still reads: its configured scopes.
    effective_scopes: provider ? effectiveScopes(provider, row.authorizeScopes) : (row.authorizeScopes ?? []),
  };
}
