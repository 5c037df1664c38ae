import * as v from 'valibot';
import { hostedLoginSso } from '../../core/capabilities/hosted-login-sso.ts';
import { oauth2Server } from '../../core/capabilities/oauth2-server.ts';
import { passwordAuthenticator } from '../../core/capabilities/password-authenticator.ts';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { envInteger, envRate, type Rate } from '../../core/contract/settings.ts';
import { pageStyleSource } from '../../core/http/hosted-page.ts';
import { requestContextReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { authorizationCodeGrant, refreshTokenGrant } from '../oauth2/grants/index.ts';
import { authorizeRoutes } from './authorize/routes.ts';
import { createLogin } from './login/login.ts';
import { migrations } from './migrations/index.ts';
import { createCodeStore } from './store/codes.ts';
import { createFamilyStore } from './store/families.ts';
import { createLoginStore } from './store/logins.ts';
import { forgetDeletedPerson } from './store/person-deleted.ts';
import { revokePersonGrants } from './store/person-revocation.ts';
import { createClientPersonRevoker, createFamilyRevoker } from './store/revoke-grants.ts';
import { sweeper } from './store/sweeper.ts';
import { createMint } from './tokens/mint.ts';
import { mintRoutes } from './tokens/mint-routes.ts';
import { createRefreshTokenStore } from './tokens/refresh-token-store.ts';
import { createUserInfo } from './tokens/userinfo.ts';

export { AuthorizeErrors } from './errors.ts';

/** Options of the authorization endpoint; each has an environment variable that overrides it. */
export interface OAuth2AuthorizeOptions {
  /** Seconds a login page may take to be submitted, 60 to 3600. @default 600 */
  loginTtlSeconds?: number;
  /** Seconds after its rotation in which a refresh token still refreshes (concurrent refreshes), 0 to 60. @default 10 */
  refreshGraceSeconds?: number;
  /** Authorization requests per client address. @default { perMinute: 60, burst: 120 } */
  authorizeRateLimit?: Rate;
}

const settings = v.object({
  OAUTH2_LOGIN_TTL_SECONDS: envInteger('OAUTH2_LOGIN_TTL_SECONDS', { min: 60, max: 3600 }),
  OAUTH2_REFRESH_GRACE_SECONDS: envInteger('OAUTH2_REFRESH_GRACE_SECONDS', { min: 0, max: 60 }),
  OAUTH2_AUTHORIZE_RATE_LIMIT: envRate('OAUTH2_AUTHORIZE_RATE_LIMIT'),
});

/** Refresh-token lifetime for a client that names none (the oauth2 plugin's default, 10 days). */
const DEFAULT_REFRESH_LIFETIME = 864_000;

function checked(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`oauth2Authorize: ${name} must be an integer from ${min} to ${max} (got ${value})`);
  return value;
}

/**
 * The authorization endpoint with its hosted login (GET and POST /oauth2/authorize, POST /oauth2/authorize/login),
 * the authorization_code (PKCE) and refresh_token grants (rotation, reuse detection, a grace window),
 * their refresh tokens for introspection and revocation (revoke-all included), GET /oauth2/userinfo, and
 * POST /oauth2/tokens/mint (tokens for a person without a login, with the organization's API key). Requires oauth2Server
 * (oauth2 plugin), tokenIssuer (tokens), personDirectory (persons) and passwordAuthenticator (password).
 * With hostedLoginSso (the sso-signin plugin) the page offers the organization's SSO credentials enabled
 * for the authorization server (POST /oauth2/authorize/sso, GET /oauth2/authorize/sso/callback, `idp`).
 *
 * @example defineService({ plugins: [persons(), tokens(), password(), oauth2(), oauth2Authorize()] })
 */
export const oauth2Authorize = (options: OAuth2AuthorizeOptions = {}) => {
  const loginTtl = checked('loginTtlSeconds', options.loginTtlSeconds ?? 600, 60, 3600);
  const grace = checked('refreshGraceSeconds', options.refreshGraceSeconds ?? 10, 0, 60);
  return definePlugin({
    id: 'oauth2-authorize',
    migrations,
    settings,
    requires: {
      server: oauth2Server,
      issuer: tokenIssuer,
      directory: personDirectory,
      authenticator: passwordAuthenticator,
    },
    emits: ['AuthenticationSucceeded_v1', 'AuthenticationFailed_v1'],
    async setup(ctx, { server, issuer, directory, authenticator }) {
      const s = ctx.settings;
      const ttlSeconds = s.OAUTH2_LOGIN_TTL_SECONDS ?? loginTtl;
      const graceSeconds = s.OAUTH2_REFRESH_GRACE_SECONDS ?? grace;
      const baseUrl = ctx.config.publicBaseUrl;
      const { storage, clock } = ctx;
      const families = createFamilyStore({ storage, clock });
      const codes = createCodeStore({ storage, clock, secrets: ctx.secrets });
      const revokeFamily = createFamilyRevoker({ server, storage, clock });
      const issuing = {
        server,
        directory,
        families,
        // The oauth2 plugin fills each client's lifetime (its own, else OAUTH2_REFRESH_TOKEN_LIFETIME).
        refreshLifetime: DEFAULT_REFRESH_LIFETIME,
        publicBaseUrl: baseUrl,
      };
      server.addGrant(authorizationCodeGrant({ ...issuing, codes, revokeFamily }));
      server.addGrant(refreshTokenGrant({ ...issuing, issuer, clock, revokeFamily, graceSeconds }));
      server.addTokenStore(
        createRefreshTokenStore({
          server,
          directory,
          families,
          revokeFamily,
          revokeAll: createClientPersonRevoker({ server, storage, clock }),
          clock,
          issuer: baseUrl,
        }),
      );

      const rate = s.OAUTH2_AUTHORIZE_RATE_LIMIT ??
        options.authorizeRateLimit ?? { perMinute: 60, burst: 120 };
      const routes = authorizeRoutes({
        server,
        login: createLogin({
          server,
          authenticator,
          issuer,
          directory,
          logins: createLoginStore({ storage, clock, ttlMs: ttlSeconds * 1000 }),
          codes,
          events: ctx.events,
          clock,
          baseUrl,
          sso: () => ctx.capability(hostedLoginSso),
        }),
        userInfo: createUserInfo({ server, directory, publicBaseUrl: baseUrl }),
        readContext: requestContextReader(ctx.headers),
        perAddress: createTokenBuckets({
          name: 'oauth2-authorize-address',
          clock,
          storage,
          perMinute: rate.perMinute,
          capacity: rate.burst,
        }),
        baseUrl,
        style: await pageStyleSource(),
        cookieMaxAge: ttlSeconds,
      });
      const mint = createMint({ ...issuing, issuer, clock, headerPrefix: ctx.config.headerPrefix });
      return {
        routes: routes.use(mintRoutes(ctx, mint)),
        attach: [forgetDeletedPerson, revokePersonGrants(server)],
        workers: [
          sweeper({
            storage,
            clock,
            log: ctx.log.child({ component: 'oauth2-authorize' }),
            intervalMs: 600_000,
          }),
        ],
        sealed: [
          {
            name: 'oauth2_authorize_codes.id_token',
            table: 'oauth2_authorize_codes',
            keys: ['code_hash'],
            column: 'id_token',
            context: (row) => `oauth2-authorize:code:${row.code_hash}`,
          },
        ],
      };
    },
  });
};
