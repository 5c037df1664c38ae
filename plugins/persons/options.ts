import { declareSettings, integer, type OptionsOf, oneOf, rate } from '../../core/contract/settings.ts';
import { REGIONS } from './api/input.ts';

/**
 * The persons plugin's settings, each declared once: the variable, the option it overrides, its rule and
 * default, and its line in docs/configuration.md (`npm run docs`).
 */
export const personsSettings = declareSettings('persons', {
  PERSONS_DEFAULT_REGION: {
    kind: oneOf(REGIONS),
    default: 'us-iowa',
    option: 'defaultRegion',
    description: 'the region of persons created without one',
  },
  EMAIL_VERIFICATION_TTL_HOURS: {
    kind: integer(1, 720),
    default: 24,
    option: 'verificationHours',
    description: 'how long an email verification link works',
  },
  EMAIL_VERIFICATION_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 2, burst: 5 },
    option: 'verificationRateLimit',
    description: 'verification links a minute / burst per person',
  },
});

/** Options of the persons plugin: one per setting above (the variable, when set, wins). */
export type PersonsOptions = OptionsOf<typeof personsSettings.declarations>;
