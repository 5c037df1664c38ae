import { declareSettings, integer, type OptionsOf, rate } from '../../core/contract/settings.ts';

/**
 * The TOTP plugin's settings, each declared once: the variable, the option it overrides, its rule and
 * default, and its line in docs/configuration.md (`npm run docs`).
 */
export const totpSettings = declareSettings('totp', {
  TOTP_ENROLMENT_MINUTES: {
    kind: integer(1, 1440),
    default: 15,
    option: 'enrolmentMinutes',
    description: 'how long a TOTP enrolment can be confirmed with a code before it lapses',
  },
  TOTP_PERSON_RATE_LIMIT: {
    kind: rate(),
    // Six-digit codes with three steps accepted: one guess in 333,333 succeeds, so at one a minute a
    // guesser needs about 160 days of failures (each an AuthenticationFailed_v1) for even odds.
    default: { perMinute: 1, burst: 5 },
    option: 'personRateLimit',
    description: 'TOTP and recovery code attempts a minute / burst per person and organization',
  },
  TOTP_ADDRESS_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 60, burst: 100 },
    option: 'addressRateLimit',
    description: 'TOTP and recovery code attempts a minute / burst per client address and organization',
  },
});

/**
 * Options of the TOTP plugin: one per setting above, named by its `option`, typed by its kind (the
 * variable, when set, wins over the option).
 */
export type TotpOptions = OptionsOf<typeof totpSettings.declarations>;
