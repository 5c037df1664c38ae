import { declareSettings, type OptionsOf, partialRate } from '../../core/contract/settings.ts';

/**
 * The webhooks plugin's settings from the environment, each declared once: the variable, the option it
 * overrides, its rule and default, and its line in docs/configuration.md (`npm run docs`).
 */
export const webhooksSettings = declareSettings('webhooks', {
  TEST_EVENTS_RATE_LIMIT: {
    // The option may give either number alone; the variable gives both.
    kind: partialRate(),
    default: { perMinute: 10, burst: 50 },
    option: 'testEventRateLimit',
    description:
      'test events a minute / burst per organization, shared by all replicas (drills and load tests raise it); the burst also bounds the events of one request',
  },
});

/** The options that have a variable: one per setting above (the variable, when set, wins). */
export type WebhooksSettingOptions = OptionsOf<typeof webhooksSettings.declarations>;
