/*
 * Everything SSO, in one folder:
 * - credentials/  the organizations' provider credentials: api/ (routes, responses), store, sealing;
 * - providers/    one file per built-in provider, made with defineSsoProvider (core/sso);
 * - signin/       the sso-signin plugin: GET /sso/oidc/start and callback, the provider round trip;
 * - hosted-login/ the SSO buttons of the authorization endpoint's page (hostedLoginSso, from signin/).
 * This file is the sso plugin (credentials); ssoSignIn() is re-exported from signin/.
 */
import { ssoCredentials } from '../../core/capabilities/sso-credentials.ts';
import { definePlugin } from '../../core/plugin.ts';
import type { SsoProvider } from '../../core/sso/define-provider.ts';
import { credentialRoutes } from './credentials/api/routes.ts';
import { createSsoCredentials } from './credentials/capability.ts';
import { createCredentialSealer, ssoSealed } from './credentials/sealing.ts';
import { createCredentialStore } from './credentials/store.ts';
import { migrations } from './migrations/index.ts';
import { builtInProviders } from './providers/index.ts';

export { effectiveScopes } from './credentials/scopes.ts';
export { SsoErrors } from './errors.ts';
export { builtInProviders } from './providers/index.ts';
export { oidcProvider } from './providers/oidc.ts';
export { buildAuthorizationUrl } from './signin/authorization-url.ts';
export { ssoSignIn } from './signin/index.ts';

/** Options of the sso plugin. */
export interface SsoOptions {
  /**
   * The providers credentials may name: exactly these `provider` values are accepted.
   * @default the nine built-ins: google, github, bitbucket, gitlab, facebook, line, azuread, okta, apple
   */
  providers?: readonly SsoProvider[];
}

const PROVIDER_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** Checks the deployment's providers at once: a wrong list fails when the service is defined. */
function registry(list: readonly SsoProvider[]): Map<string, SsoProvider> {
  const map = new Map<string, SsoProvider>();
  for (const p of list) {
    if (!PROVIDER_ID.test(p.id))
      throw new Error(
        `sso({ providers }): provider id ${JSON.stringify(p.id)} must be lower-case letters, digits and - (at most 63)`,
      );
    if (map.has(p.id)) throw new Error(`sso({ providers }): provider ${p.id} is listed twice`);
    map.set(p.id, p);
  }
  if (map.size === 0) throw new Error('sso({ providers }): list at least one provider');
  return map;
}

/**
 * SSO: the organizations' OIDC provider credentials (POST, GET, PATCH, DELETE
 * /organizations/sso/oidc/provider-credentials), client secrets sealed at rest, and the ssoCredentials
 * capability the sign-in flow opens them through.
 *
 * @example
 * defineService({ plugins: [sso({ providers: [...builtInProviders, acmeIdp] })] })
 */
export const sso = (options: SsoOptions = {}) => {
  const providers = registry(options.providers ?? builtInProviders);
  return definePlugin({
    id: 'sso',
    migrations,
    provides: { ssoCredentials },
    setup(ctx) {
      const sealer = createCredentialSealer(ctx.secrets);
      const store = createCredentialStore({ storage: ctx.storage, clock: ctx.clock, sealer });
      return {
        routes: credentialRoutes(ctx, store, providers),
        provide: { ssoCredentials: createSsoCredentials(store, sealer, providers) },
        sealed: ssoSealed,
      };
    },
  });
};
