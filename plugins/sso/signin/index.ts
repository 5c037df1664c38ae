import { hostedLoginSso } from '../../../core/capabilities/hosted-login-sso.ts';
import { personDirectory } from '../../../core/capabilities/person-directory.ts';
import { ssoAuthenticator } from '../../../core/capabilities/sso-authenticator.ts';
import { ssoCredentials } from '../../../core/capabilities/sso-credentials.ts';
import { tokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { browserBinding } from '../../../core/http/browser-binding.ts';
import { requestContextReader } from '../../../core/http/sign-in-context.ts';
import { definePlugin } from '../../../core/plugin.ts';
import { createHostedLoginSso } from '../hosted-login/buttons.ts';
import { signInRoutes } from './api/routes.ts';
import { createSsoAuthenticator } from './authenticator.ts';
import { createSignInFlow } from './flow.ts';
import { migrations } from './migrations/index.ts';
import { type SsoSignInOptions, ssoSignInSettings } from './options.ts';
import { createProviderClient } from './provider-client.ts';
import { createSignInStore } from './store.ts';

export { SsoSignInErrors } from './errors.ts';

export type { SsoSignInOptions };

/**
 * Sign-in with a stored SSO credential: GET /sso/oidc/start, GET /sso/oidc/callback/{callback_id} (each
 * credential's own redirect URI; the start's browser only) and the organization's allowed redirect
 * URIs. Provides ssoAuthenticator, the same provider round trip for another sign-in surface, and
 * hostedLoginSso, the SSO buttons of the authorization endpoint's hosted login (../hosted-login/).
 * Requires ssoCredentials (sso plugin), personDirectory (persons) and tokenIssuer (tokens).
 *
 * @example defineService({ plugins: [persons(), tokens(), sso(), ssoSignIn()] })
 */
export const ssoSignIn = (options: SsoSignInOptions = {}) => {
  ssoSignInSettings.checkOptions(options);
  return definePlugin({
    id: 'sso-signin',
    migrations,
    settings: ssoSignInSettings.schema,
    requires: { credentials: ssoCredentials, directory: personDirectory, issuer: tokenIssuer },
    provides: { authenticator: ssoAuthenticator, hostedLogin: hostedLoginSso },
    emits: ['AuthenticationSucceeded_v1', 'AuthenticationFailed_v1'],
    setup(ctx, { credentials, directory, issuer }) {
      const stateTtlMs = ssoSignInSettings.resolve(ctx.settings, options).SSO_SIGNIN_STATE_TTL_SECONDS * 1000;
      const store = createSignInStore({ storage: ctx.storage, clock: ctx.clock, stateTtlMs });
      const client = createProviderClient(ctx.outbound.sso);
      const flow = createSignInFlow({
        credentials,
        directory,
        issuer,
        store,
        client,
        events: ctx.events,
        clock: ctx.clock,
        baseUrl: ctx.config.publicBaseUrl,
      });
      const browser = browserBinding({
        baseUrl: ctx.config.publicBaseUrl,
        name: 'sso_browser',
        maxAgeSeconds: stateTtlMs / 1000,
      });
      const authenticator = createSsoAuthenticator({ credentials, flow, client, clock: ctx.clock });
      return {
        routes: signInRoutes(ctx, {
          flow,
          store,
          browser,
          readContext: requestContextReader(ctx.headers),
        }),
        provide: {
          authenticator,
          hostedLogin: createHostedLoginSso({ authenticator, baseUrl: ctx.config.publicBaseUrl }),
        },
      };
    },
  });
};
