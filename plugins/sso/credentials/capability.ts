import type { SsoCredentials } from '../../../core/capabilities/sso-credentials.ts';
import type { SsoProvider } from '../../../core/sso/define-provider.ts';
import { effectiveScopes } from './scopes.ts';
import type { CredentialSealer } from './sealing.ts';
import type { CredentialStore } from './store.ts';

/** The ssoCredentials capability: credentials opened for the sign-in flow, and the provider registry. */
export function createSsoCredentials(
  store: CredentialStore,
  sealer: CredentialSealer,
  providers: Map<string, SsoProvider>,
): SsoCredentials {
  return {
    async list(orgId) {
      const rows = await store.list(orgId);
      return rows.map((row) => ({
        provider: row.provider,
        clientId: row.clientId,
        label: row.label,
        options: row.options,
        enableInServiceOidcAuthzServer: row.enableInAuthzServer,
      }));
    },
    async byCallback(callbackId) {
      const row = await store.findByCallback(callbackId);
      return row && { orgId: row.orgId, clientId: row.clientId };
    },
    async open(orgId, clientId) {
      const row = await store.find(orgId, clientId);
      const provider = row && providers.get(row.provider);
      if (!row || !provider) return undefined;
      const secrets = await sealer.openOptions(row.orgId, row.id, row.secretOptions);
      return {
        provider: row.provider,
        clientId: row.clientId,
        callbackId: row.callbackId,
        clientSecret: await sealer.openSecret(row.orgId, row.id, row.clientSecret),
        options: { ...row.options, ...secrets },
        effectiveScopes: effectiveScopes(provider, row.authorizeScopes),
        enableInServiceOidcAuthzServer: row.enableInAuthzServer,
      };
    },
    provider: (id) => providers.get(id),
  };
}
