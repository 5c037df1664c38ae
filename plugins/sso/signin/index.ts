import * as v from 'valibot';
import { hostedLoginSso } from '../../../core/capabilities/hosted-login-sso.ts';
import { personDirectory } from '../../../core/capabilities/person-directory.ts';
import { ssoAuthenticator } from '../../../core/capabilities/sso-authenticator.ts';
import { ssoCredentials } from '../../../core/capabilities/sso-credentials.ts';
import { tokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { envInteger } from '../../../core/contract/settings.ts';
import { browserBinding } from '../../../core/http/browser-binding.ts';
import { requestContextReader } from '../../../core/http/sign-in-context.ts';
import { definePlugin } from '../../../core/plugin.ts';
import { createHostedLoginSso } from '../hosted-login/buttons.ts';
import { signInRoutes } from './api/routes.ts';
import { createSsoAuthenticator } from './authenticator.ts';
import { createSignInFlow } from './flow.ts';
import { migrations } from './migrations/index.ts';
import { createProviderClient } from './provider-client.ts';
import { createSignInStore } from './store.ts';

export { SsoSignInErrors } from './errors.ts';

export interface SsoSignInOptions {
  /** How long a started sign-in may take; SSO_SIGNIN_STATE_TTL_SECONDS wins. @default 600 */
  stateTtlSeconds?: number;
}

const settings = v.object({
  SSO_SIGNIN_STATE_TTL_SECONDS: envInteger('SSO_SIGNIN_STATE_TTL_SECONDS', { min: 30, max: 3600 }),
});

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
  const ttl = options.stateTtlSeconds ?? 600;
  if (!Number.isInteger(ttl) || ttl < 30 || ttl > 3600)
    throw new Error(`ssoSignIn: stateTtlSeconds must be an integer from 30 to 3600 (got ${ttl})`);
  return definePlugin({
    id: 'sso-signin',
    migrations,
    settings,
    requires: { credentials: ssoCredentials, directory: personDirectory, issuer: tokenIssuer },
    provides: { authenticator: ssoAuthenticator, hostedLogin: hostedLoginSso },
    emits: ['AuthenticationSucceeded_v1', 'AuthenticationFailed_v1'],
    setup(ctx, { credentials, directory, issuer }) {
      const stateTtlMs = (ctx.settings.SSO_SIGNIN_STATE_TTL_SECONDS ?? ttl) * 1000;
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
