import { declareSettings, integer, type OptionsOf } from '../../core/contract/settings.ts';

/** The longest token lifetime: a day, well inside the Signer's 7-day grace for replaced keys. */
const MAX_LIFETIME = 86_400;

/**
 * The tokens plugin's settings, each declared once: the variable, the option it overrides, its rule and
 * default, and its line in docs/configuration.md (`npm run docs`).
 */
export const tokensSettings = declareSettings('tokens', {
  TOKEN_LIFETIME: {
    kind: integer(60, MAX_LIFETIME),
    default: 3600,
    option: 'lifetimeSeconds',
    description: 'seconds an identity token lives',
  },
});

/** Options of the tokens plugin: one per setting above (the variable, when set, wins), and the JWKS cache. */
export type TokensOptions = OptionsOf<typeof tokensSettings.declarations> & {
  /** Cache-Control max-age of /.well-known/jwks.json and the discovery document. @default 300 */
  jwksMaxAgeSeconds?: number;
};
