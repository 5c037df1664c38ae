import { declareSettings, integer, type OptionsOf } from '../../../core/contract/settings.ts';

/**
 * The sso-signin plugin's settings, each declared once: the variable, the option it overrides, its rule
 * and default, and its line in docs/configuration.md (`npm run docs`).
 */
export const ssoSignInSettings = declareSettings('ssoSignIn', {
  SSO_SIGNIN_STATE_TTL_SECONDS: {
    kind: integer(30, 3600),
    default: 600,
    option: 'stateTtlSeconds',
    description: 'how long a started SSO sign-in may take',
  },
});

/** Options of the sso-signin plugin: one per setting above (the variable, when set, wins). */
export type SsoSignInOptions = OptionsOf<typeof ssoSignInSettings.declarations>;
