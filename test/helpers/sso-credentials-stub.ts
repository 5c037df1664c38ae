import type { OpenedSsoCredential } from '../../core/capabilities/sso-credentials.ts';
import { ssoCredentials } from '../../core/capabilities/sso-credentials.ts';
import { definePlugin } from '../../core/plugin.ts';
import type { SsoProvider } from '../../core/sso/define-provider.ts';

/**
 * Stands in for the sso plugin's ssoCredentials capability until it is merged: the given providers, and
 * credentials added by the test per organization (opened as the real plugin opens them). Switch tests to
 * `sso({ providers })` and its API once it exists.
 */
export function ssoCredentialsStub(providers: SsoProvider<string, unknown>[]) {
  const stored = new Map<string, OpenedSsoCredential>();
  const plugin = definePlugin({
    id: 'sso-credentials-stub',
    provides: { ssoCredentials },
    setup: () => ({
      provide: {
        ssoCredentials: {
          open: async (orgId: string, clientId: string) => stored.get(`${orgId}|${clientId}`),
          provider: (id: string) => providers.find((p) => p.id === id),
        },
      },
    }),
  });
  return {
    plugin,
    add(orgId: string, credential: Omit<OpenedSsoCredential, 'enableInServiceOidcAuthzServer'>) {
      stored.set(`${orgId}|${credential.clientId}`, { ...credential, enableInServiceOidcAuthzServer: false });
    },
  };
}
