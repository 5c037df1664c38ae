import { declareSettings, integer, type OptionsOf, rate } from '../../core/contract/settings.ts';

/**
 * The oauth2-authorize plugin's settings, each declared once: the variable, the option it overrides, its
 * rule and default, and its line in docs/configuration.md (`npm run docs`).
 */
export const oauth2AuthorizeSettings = declareSettings('oauth2Authorize', {
  OAUTH2_LOGIN_TTL_SECONDS: {
    kind: integer(60, 3600),
    default: 600,
    option: 'loginTtlSeconds',
    description: 'how long the hosted login page may take to be submitted',
  },
  OAUTH2_REFRESH_GRACE_SECONDS: {
    kind: integer(0, 60),
    default: 10,
    option: 'refreshGraceSeconds',
    description: 'seconds a rotated refresh token still refreshes (concurrent refreshes); 0: never',
  },
  OAUTH2_SESSION_IDLE_SECONDS: {
    kind: integer(300, 31_536_000),
    default: 259_200,
    option: 'sessionIdleSeconds',
    description: 'a sign-in session ends when no authorization used it for this long (3 days)',
  },
  OAUTH2_SESSION_MAX_SECONDS: {
    kind: integer(300, 31_536_000),
    default: 1_209_600,
    option: 'sessionMaxSeconds',
    description: 'a sign-in session ends this long after the sign-in, used or not (14 days)',
  },
  OAUTH2_AUTHORIZE_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 60, burst: 120 },
    option: 'authorizeRateLimit',
    description: 'authorization requests a minute / burst per client address',
  },
  OAUTH2_PAR_LIFETIME_SECONDS: {
    kind: integer(10, 600),
    default: 60,
    option: 'parLifetimeSeconds',
    description:
      'seconds a pushed authorization request (POST /oauth2/par, RFC 9126) may be used in: its request_uri expires_in',
  },
  OAUTH2_DEVICE_CODE_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 10, burst: 10 },
    option: 'deviceCodeRateLimit',
    description:
      'user codes entered at the device page (GET /oauth2/device) a minute / burst per client address: guessing codes is limited',
  },
});

/** Options of the authorization endpoint: one per setting above (the variable, when set, wins). */
export type OAuth2AuthorizeOptions = OptionsOf<typeof oauth2AuthorizeSettings.declarations>;
