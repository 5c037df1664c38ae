import { declareSettings, integer, type OptionsOf, rate } from '../../core/contract/settings.ts';

/**
 * The email-codes plugin's settings, each declared once: the variable, the option it overrides, its rule
 * and default, and its line in docs/configuration.md (`npm run docs`).
 */
export const emailCodeSettings = declareSettings('email-codes', {
  EMAIL_CODE_TTL_MINUTES: {
    kind: integer(1, 60),
    default: 10,
    option: 'ttlMinutes',
    description: 'how long an email sign-in code or link works',
  },
  EMAIL_CODE_MAX_ATTEMPTS: {
    kind: integer(1, 20),
    default: 5,
    option: 'maxAttempts',
    description: 'wrong codes a challenge takes before it is void (a new code must be asked for)',
  },
  EMAIL_SIGN_IN_HANDLE_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 2, burst: 5 },
    option: 'sendHandleRateLimit',
    description: 'codes and links sent a minute / burst per handle and organization',
  },
  EMAIL_SIGN_IN_ADDRESS_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 20, burst: 30 },
    option: 'sendAddressRateLimit',
    description: 'codes and links asked for a minute / burst per client address and organization',
  },
  EMAIL_VERIFY_HANDLE_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 10, burst: 10 },
    option: 'verifyHandleRateLimit',
    description: 'code checks a minute / burst per handle and organization',
  },
  EMAIL_VERIFY_ADDRESS_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 60, burst: 100 },
    option: 'verifyAddressRateLimit',
    description: 'code checks, link polls and link confirmations a minute / burst per client address',
  },
  EMAIL_LINK_POLL_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 30, burst: 10 },
    option: 'linkPollRateLimit',
    description: 'polls a minute / burst of one email_link challenge (POST /authenticate/email/verify)',
  },
});

/** Options of the email-codes plugin: one per setting above, named by its `option`. */
export type EmailCodeOptions = OptionsOf<typeof emailCodeSettings.declarations>;
