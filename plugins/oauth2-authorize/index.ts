import { hostedLoginEmailCodes } from '../../core/capabilities/hosted-login-email-codes.ts';
import { hostedLoginPasskeys } from '../../core/capabilities/hosted-login-passkeys.ts';
import { hostedLoginSso } from '../../core/capabilities/hosted-login-sso.ts';
import { oauth2Server } from '../../core/capabilities/oauth2-server.ts';
import { passwordAuthenticator } from '../../core/capabilities/password-authenticator.ts';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { signInCompletion } from '../../core/capabilities/sign-in-completion.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { checkSecondFactor } from '../../core/factors/second-factor.ts';
import { pageStyleSource } from '../../core/http/hosted-page.ts';
import { requestContextReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { authorizationCodeGrant, deviceCodeGrant, refreshTokenGrant } from '../oauth2/grants/index.ts';
import { pushedAuthorization } from './authorize/pushed.ts';
import { authorizeRoutes } from './authorize/routes.ts';
import { createOAuth2ConsentRevoker } from './consent/revoke.ts';
import { oauth2ConsentRoutes } from './consent/routes.ts';
import { createConsentStep } from './consent/step.ts';
import { createOAuth2ConsentStore } from './consent/store.ts';
import { deviceAuthorization } from './device/authorization.ts';
import { deviceRoutes } from './device/routes.ts';
import { createDeviceStore, deviceSealContext } from './device/store.ts';
import { endSessionRoutes } from './end-session/routes.ts';
import { formPostScriptSource } from './login/form-post.ts';
import { createLogin } from './login/login.ts';
import { passkeyScriptSource } from './login/passkey-page.ts';
import { createBackchannelLogout } from './logout/backchannel-logout.ts';
import { migrations } from './migrations/index.ts';
import { type OAuth2AuthorizeOptions, oauth2AuthorizeSettings } from './options.ts';
import { sessionApiRoutes } from './sessions/api-routes.ts';
import { sessionCookies } from './sessions/cookie.ts';
import { sessionEnding } from './sessions/end.ts';
import { sessionEndedRelay } from './sessions/ended-relay.ts';
import { createSessionStore } from './sessions/store.ts';
import { sessionSweeper } from './sessions/sweeper.ts';
import { sessionEndingTriggers } from './sessions/triggers.ts';
import { createCodeStore } from './store/codes.ts';
import { createFamilyStore } from './store/families.ts';
import { createLoginStore } from './store/logins.ts';
import { forgetDeletedPerson } from './store/person-deleted.ts';
import { revokePersonGrants } from './store/person-revocation.ts';
import { createPushedRequestStore } from './store/pushed-requests.ts';
import { createClientPersonRevoker, createFamilyRevoker } from './store/revoke-grants.ts';
import { sweeper } from './store/sweeper.ts';
import { createMint } from './tokens/mint.ts';
import { mintRoutes } from './tokens/mint-routes.ts';
import { createRefreshTokenStore } from './tokens/refresh-token-store.ts';
import { createUserInfo } from './tokens/userinfo.ts';

export { AuthorizeErrors } from './errors.ts';
export { type BackchannelLogout, createBackchannelLogout } from './logout/backchannel-logout.ts';
export { BACKCHANNEL_LOGOUT_TOPIC, type LogoutNotice } from './logout/backchannel-notice.ts';

export type { OAuth2AuthorizeOptions };

/** Refresh-token lifetime for a client that names none (the oauth2 plugin's default, 10 days). */
const DEFAULT_REFRESH_LIFETIME = 864_000;

/**
 * The authorization endpoint with its hosted login (GET and POST /oauth2/authorize, POST /oauth2/authorize/login),
 * the authorization_code (PKCE) and refresh_token grants (rotation, reuse detection, a grace window),
 * their refresh tokens for introspection and revocation (revoke-all included), GET /oauth2/userinfo, and
 * POST /oauth2/tokens/mint (tokens for a person without a login, with the organization's API key), a
 * person's consents to third-party clients (GET, DELETE /persons/{id}/oauth2-consents[/{client_id}]), and
 * the durable delivery of back-channel logout tokens (logout/backchannel-logout.ts). Requires oauth2Server
 * (oauth2 plugin), tokenIssuer (tokens), personDirectory (persons) and passwordAuthenticator (password).
 * With hostedLoginSso (the sso-signin plugin) the page offers the organization's SSO credentials enabled
 * for the authorization server (POST /oauth2/authorize/sso, GET /oauth2/authorize/sso/callback, `idp`),
 * while the organization's policy allows oidc. With hostedLoginEmailCodes (the email-codes plugin) it
 * offers a sign-in code by email (POST /oauth2/authorize/email-code, /email-code/verify) and the code as
 * the second step (POST /oauth2/authorize/second-factor/email).
 *
 * @example defineService({ plugins: [persons(), tokens(), password(), oauth2(), oauth2Authorize()] })
 */
export const oauth2Authorize = (options: OAuth2AuthorizeOptions = {}) => {
  oauth2AuthorizeSettings.checkOptions(options);
  return definePlugin({
    id: 'oauth2-authorize',
    migrations,
    settings: oauth2AuthorizeSettings.schema,
    requires: {
      server: oauth2Server,
      issuer: tokenIssuer,
      directory: personDirectory,
      authenticator: passwordAuthenticator,
    },
    emits: ['AuthenticationSucceeded_v1', 'AuthenticationFailed_v1', 'PersonLoggedOut_v1'],
    async setup(ctx, { server, issuer, directory, authenticator }) {
      const s = oauth2AuthorizeSettings.resolve(ctx.settings, options);
      const ttlSeconds = s.OAUTH2_LOGIN_TTL_SECONDS;
      const graceSeconds = s.OAUTH2_REFRESH_GRACE_SECONDS;
      const baseUrl = ctx.config.publicBaseUrl;
      const { storage, clock } = ctx;
      const families = createFamilyStore({ storage, clock });
      const codes = createCodeStore({ storage, clock, secrets: ctx.secrets });
      const revokeFamily = createFamilyRevoker({ server, storage, clock });
      const log = ctx.log.child({ component: 'oauth2-authorize' });
      // Logout tokens to the clients of an ended sign-in session: `backchannel.send(notices, { tx })`.
      const backchannel = createBackchannelLogout({
        bus: ctx.bus,
        delivery: ctx.delivery,
        clock,
        log,
        issuer,
        metrics: ctx.metrics,
      });
      const sessions = createSessionStore({
        storage,
        clock,
        lifetimes: {
          idleMs: s.OAUTH2_SESSION_IDLE_SECONDS * 1000,
          absoluteMs: s.OAUTH2_SESSION_MAX_SECONDS * 1000,
        },
      });
      // Every way a session ends (logout, the API, a lifetime, the person changed) finishes it here.
      const finishSessions = sessionEnding({ directory, events: ctx.events, bus: ctx.bus });
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
      const devices = createDeviceStore({ storage, clock, secrets: ctx.secrets });
      server.addGrant(deviceCodeGrant({ ...issuing, devices: devices.codes, clock, revokeFamily }));
      server.setDeviceAuthorization(deviceAuthorization({ devices, baseUrl }));
      // RFC 9126: the oauth2 plugin's POST /oauth2/par authenticates the client; the request is checked here.
      const pushed = createPushedRequestStore({
        storage,
        clock,
        lifetimeMs: s.OAUTH2_PAR_LIFETIME_SECONDS * 1000,
      });
      server.setPushedAuthorization(
        pushedAuthorization({
          server,
          store: pushed,
          baseUrl,
          lifetimeSeconds: s.OAUTH2_PAR_LIFETIME_SECONDS,
        }),
      );
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

      const consents = createOAuth2ConsentStore({ storage, clock });
      const logins = createLoginStore({ storage, clock, ttlMs: ttlSeconds * 1000 });
      const cookies = sessionCookies({ baseUrl, maxAgeSeconds: s.OAUTH2_SESSION_MAX_SECONDS });
      const rate = s.OAUTH2_AUTHORIZE_RATE_LIMIT;
      const formPostScript = await formPostScriptSource();
      const login = createLogin({
        server,
        authenticator,
        issuer,
        directory,
        logins,
        codes,
        events: ctx.events,
        clock,
        baseUrl,
        sso: () => ctx.capability(hostedLoginSso),
        sessions,
        cookies,
        ended: (ended, rc) => finishSessions(ended, rc ? { request: rc } : {}),
        consent: createConsentStep({ consents, logins, baseUrl }),
        consents,
        secondStep: {
          completion: () => ctx.capability(signInCompletion),
          check: async (input) => (await ctx.hooks.run(checkSecondFactor, input))[0],
          emailCodes: () => ctx.capability(hostedLoginEmailCodes),
        },
        formPostScript,
        passkeys: () => ctx.capability(hostedLoginPasskeys),
        passkeyScript: await passkeyScriptSource(),
      });
      const routes = authorizeRoutes({
        server,
        login,
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
        sessionCookies: cookies,
        formPostScript,
        pushed,
      });
      const mint = createMint({ ...issuing, issuer, clock, headerPrefix: ctx.config.headerPrefix });
      const consentRoutes = oauth2ConsentRoutes(ctx, {
        consents,
        revoke: createOAuth2ConsentRevoker({ storage, clock, server, consents }),
        directory,
        server,
      });
      return {
        routes: routes
          .use(mintRoutes(ctx, mint))
          .use(consentRoutes)
          .use(
            deviceRoutes({
              server,
              login,
              devices,
              codes,
              sessions,
              sessionCookies: cookies,
              readContext: requestContextReader(ctx.headers),
              perAddress: createTokenBuckets({
                name: 'oauth2-device-address',
                clock,
                storage,
                perMinute: s.OAUTH2_DEVICE_CODE_RATE_LIMIT.perMinute,
                capacity: s.OAUTH2_DEVICE_CODE_RATE_LIMIT.burst,
              }),
              baseUrl,
              style: await pageStyleSource(),
              cookieMaxAge: ttlSeconds,
            }),
          )
          .use(sessionApiRoutes(ctx, { sessions, finish: finishSessions, directory }))
          .use(
            endSessionRoutes({
              server,
              issuer,
              sessions,
              finish: finishSessions,
              storage,
              cookies,
              readContext: requestContextReader(ctx.headers),
              baseUrl,
              style: await pageStyleSource(),
            }),
          ),
        attach: [
          forgetDeletedPerson,
          revokePersonGrants(server),
          ...sessionEndingTriggers(sessions, finishSessions),
        ],
        workers: [
          sweeper({ storage, clock, log, intervalMs: 600_000 }),
          sessionSweeper({ storage, sessions, finish: finishSessions, log, intervalMs: 60_000 }),
          backchannel.worker,
          sessionEndedRelay({ bus: ctx.bus, server, backchannel, log }),
        ],
        sealed: [
          {
            name: 'oauth2_authorize_codes.id_token',
            table: 'oauth2_authorize_codes',
            keys: ['code_hash'],
            column: 'id_token',
            context: (row) => `oauth2-authorize:code:${row.code_hash}`,
          },
          {
            name: 'oauth2_authorize_devices.id_token',
            table: 'oauth2_authorize_devices',
            keys: ['device_code_hash'],
            column: 'id_token',
            context: (row) => deviceSealContext(String(row.device_code_hash)),
          },
        ],
      };
    },
  });
};
