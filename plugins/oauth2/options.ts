import { declareSettings, flag, integer, type OptionsOf } from '../../core/contract/settings.ts';
import { MAX_ACCESS_TOKEN_SECONDS, MAX_REFRESH_TOKEN_SECONDS } from './schema.ts';

/**
 * The oauth2 plugin's settings, each declared once: the variable, the option it overrides, its rule and
 * default, and its line in docs/configuration.md (`npm run docs`).
 */
export const oauth2Settings = declareSettings('oauth2', {
  OAUTH2_ACCESS_TOKEN_LIFETIME: {
    kind: integer(60, MAX_ACCESS_TOKEN_SECONDS),
    default: 3600,
    option: 'accessTokenLifetimeSeconds',
    description: 'seconds access tokens live, for clients that set no `access_token_duration`',
  },
  OAUTH2_REFRESH_TOKEN_LIFETIME: {
    kind: integer(60, MAX_REFRESH_TOKEN_SECONDS),
    default: 864_000,
    option: 'refreshTokenLifetimeSeconds',
    description: 'seconds refresh tokens live, for clients that set no `refresh_token_duration`',
  },
  OAUTH2_DPOP_NONCE: {
    kind: flag(),
    default: false,
    option: 'dpopNonce',
    description:
      'require a server nonce in DPoP proofs (RFC 9449 §8): a proof without a current one is answered `use_dpop_nonce` with a `DPoP-Nonce` header',
  },
});

/** Options of the oauth2 plugin: one per setting above (the variable, when set, wins), and the client cache. */
export type OAuth2Options = OptionsOf<typeof oauth2Settings.declarations> & {
  /**
   * How long a replica trusts its cached view of a client: a change made on another replica (a new
   * secret, a deleted client) takes this long to be seen there. @default 5000
   */
  clientCacheMs?: number;
};
