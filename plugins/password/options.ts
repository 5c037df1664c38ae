import { declareSettings, flag, integer, type OptionsOf, rate } from '../../core/contract/settings.ts';

/**
 * The password plugin's settings, each declared once: the variable, the option it overrides, its rule and
 * default, and its line in docs/configuration.md (`npm run docs`).
 */
export const passwordSettings = declareSettings('password', {
  PASSWORD_ARGON2_MEMORY_KIB: {
    kind: integer(1024, 4_194_304),
    // 19 MiB: OWASP's first argon2id configuration.
    default: 19_456,
    option: 'argon2.memoryKiB',
    uncheckedOption: true,
    description: 'argon2id memory in KiB; hashes made with other parameters are rehashed on the next sign-in',
  },
  PASSWORD_ARGON2_ITERATIONS: {
    kind: integer(1, 20),
    default: 2,
    option: 'argon2.iterations',
    uncheckedOption: true,
    description: 'argon2id passes',
  },
  PASSWORD_ARGON2_PARALLELISM: {
    kind: integer(1, 16),
    default: 1,
    option: 'argon2.parallelism',
    uncheckedOption: true,
    description: 'argon2id lanes',
  },
  PASSWORD_HANDLE_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 10, burst: 10 },
    option: 'handleRateLimit',
    description: 'sign-in attempts a minute / burst per handle and organization',
  },
  PASSWORD_ADDRESS_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 60, burst: 100 },
    option: 'addressRateLimit',
    description: 'sign-in attempts a minute / burst per client address and organization',
  },
  ANONYMOUS_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 10, burst: 20 },
    option: 'anonymousRateLimit',
    description: 'anonymous persons a minute / burst per client address and organization',
  },
  PASSWORD_RESET_TTL_MINUTES: {
    kind: integer(1, 1440),
    default: 15,
    option: 'resetTokenMinutes',
    description: 'how long a reset link works',
  },
  PASSWORD_RESET_REVOKE_TOKENS: {
    kind: flag(),
    default: true,
    option: 'revokeTokensOnReset',
    description: "revoke the person's earlier tokens when a reset link sets the password",
  },
  PASSWORD_RESET_HANDLE_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 2, burst: 3 },
    option: 'resetHandleRateLimit',
    description: 'reset requests a minute / burst per handle and organization',
  },
  PASSWORD_RESET_ADDRESS_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 20, burst: 30 },
    option: 'resetAddressRateLimit',
    description: 'reset requests and confirmations a minute / burst per client address',
  },
});

/**
 * Options of the password plugin: one per setting above, named by its `option`, typed by its kind (the
 * variable, when set, wins over the option).
 */
export type PasswordOptions = OptionsOf<typeof passwordSettings.declarations>;
