import { declareSettings, integer, type OptionsOf, oneOf, rate } from '../../core/contract/settings.ts';

/**
 * The passkeys plugin's settings, each declared once: the variable, the option it overrides, its rule
 * and default, and its line in docs/configuration.md (`npm run docs`).
 */
export const passkeySettings = declareSettings('passkeys', {
  PASSKEY_CHALLENGE_SECONDS: {
    kind: integer(30, 600),
    default: 300,
    option: 'challengeSeconds',
    description: 'how long a WebAuthn challenge (registration, sign-in, second step) can be answered',
  },
  PASSKEY_USER_VERIFICATION: {
    kind: oneOf(['required', 'preferred']),
    default: 'preferred',
    option: 'userVerification',
    description:
      'whether a passkey sign-in (first factor) must prove the user (PIN, biometrics) or only possession when the authenticator cannot',
  },
  PASSKEY_HOSTED_LOGIN_OFFER: {
    kind: oneOf(['policy', 'off']),
    default: 'policy',
    option: 'hostedLoginOffer',
    description:
      'policy: the hosted login asks "Add a passkey?" after a sign-in by another factor when the organization\'s policy allows passkeys as a first factor and the person has none ("Not now" is remembered for 90 days); off: never',
  },
  PASSKEY_ADDRESS_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 30, burst: 60 },
    option: 'addressRateLimit',
    description:
      'passkey ceremonies (options and answers) a minute / burst per client address and organization',
  },
});

/**
 * Options of the passkeys plugin: one per setting above, named by its `option`, typed by its kind (the
 * variable, when set, wins over the option).
 */
export type PasskeyOptions = OptionsOf<typeof passkeySettings.declarations>;
