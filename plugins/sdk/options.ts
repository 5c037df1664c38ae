import { declareSettings, type OptionsOf, rate } from '../../core/contract/settings.ts';

/**
 * The sdk plugin's settings, each declared once: the variable, the option it overrides, its rule and
 * default, and its line in docs/configuration.md (`npm run docs`).
 */
export const sdkSettings = declareSettings('sdk', {
  SDK_RATE_LIMIT: {
    kind: rate(),
    default: { perMinute: 600, burst: 200 },
    option: 'rateLimit',
    description: 'SDK events (and logouts) a minute / burst per client address and organization',
  },
});

/** Options of the sdk plugin: one per setting above (the variable, when set, wins). */
export type SdkOptions = OptionsOf<typeof sdkSettings.declarations>;
