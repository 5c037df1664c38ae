import { declareSettings, integer, type OptionsOf, rate } from '../../core/contract/settings.ts';

/**
 * The factors plugin's settings, each declared once: the variable, the option it overrides, its rule and
 * default, and its line in docs/configuration.md (`npm run docs`).
 */
export const factorsSettings = declareSettings('factors', {
  MFA_TOKEN_TTL_SECONDS: {
    kind: integer(30, 1800),
    default: 300,
    option: 'mfaTokenSeconds',
    description: 'how long an mfa_token (the second step of a sign-in) can be completed',
  },
  MFA_TOKEN_MAX_FAILURES: {
    kind: integer(1, 20),
    default: 5,
    option: 'mfaTokenMaxFailures',
    description: 'failed second-factor checks after which an mfa_token is void',
  },
  MFA_TOKEN_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 5, burst: 5 },
    option: 'mfaTokenRateLimit',
    description: 'POST /authenticate/mfa attempts a minute / burst per mfa_token',
  },
  MFA_ADDRESS_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 30, burst: 60 },
    option: 'mfaAddressRateLimit',
    description: 'POST /authenticate/mfa attempts a minute / burst per client address and organization',
  },
});

/** Options of the factors plugin: one per setting above, named by its `option`. */
export type FactorsOptions = OptionsOf<typeof factorsSettings.declarations>;
