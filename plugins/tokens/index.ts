import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { type TokenIssuer, tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { definePlugin } from '../../core/plugin.ts';
import { beforeTokenIssued } from '../../core/tokens/before-token-issued.ts';
import { serviceTokenClaims } from '../../core/tokens/service-claims.ts';
import { onTokenRevoked } from '../../core/tokens/token-revoked.ts';
import { organizationMetadataRoutes } from './api/organization-metadata.ts';
import { tokenRoutes } from './api/routes.ts';
import { wellKnownRoutes } from './api/well-known.ts';
import { reservedClaims } from './issue/claims.ts';
import { createFirstTokens } from './issue/first-token.ts';
import { createIssue } from './issue/issuer.ts';
import { TOKEN_KEYS_OWNER, tokenKeys } from './issue/keys.ts';
import { createLogoutTokenSigner } from './issue/logout-token.ts';
import { migrations } from './migrations/index.ts';
import { type TokensOptions, tokensSettings } from './options.ts';
import { createIdTokenVerifier } from './validation/id-token.ts';
import { forgetDeletedPerson } from './validation/person-deleted.ts';
import { revokeEarlierTokens } from './validation/person-revocation.ts';
import { createRevoke } from './validation/revocation.ts';
import { createValidator } from './validation/validation.ts';

export type { TokensOptions };
export { TOKEN_KEYS_OWNER };

/**
 * Identity tokens: the tokenIssuer capability (ES256 JWTs signed with the deployment's token keys,
 * beforeTokenIssued before each, first_token, TokenMinted_v1 and AnonymousTokenMinted_v1; revocation with
 * onTokenRevoked in its transaction; back-channel logout tokens signed by the same keys), the JWKS
 * and discovery documents, POST /token/validate and /token/revoke, and POST /persons/{id}/mint-token.
 *
 * @example
 * defineService({ plugins: [persons(), tokens({ lifetimeSeconds: 900 })] })
 */
export const tokens = (options: TokensOptions = {}) => {
  tokensSettings.checkOptions(options);
  const maxAge = options.jwksMaxAgeSeconds ?? 300;
  if (!Number.isInteger(maxAge) || maxAge < 0 || maxAge > 86_400)
    throw new Error(`tokens: jwksMaxAgeSeconds must be an integer from 0 to 86400 (got ${maxAge})`);
  return definePlugin({
    id: 'tokens',
    migrations,
    settings: tokensSettings.schema,
    provides: { tokenIssuer },
    requires: { persons: personDirectory },
    declares: [beforeTokenIssued, serviceTokenClaims, onTokenRevoked],
    emits: ['TokenMinted_v1', 'AnonymousTokenMinted_v1'],
    setup(ctx, { persons }) {
      const keys = tokenKeys(ctx.signer);
      const lifetimeSeconds = tokensSettings.resolve(ctx.settings, options).TOKEN_LIFETIME;
      const validator = createValidator({
        storage: ctx.storage,
        clock: ctx.clock,
        keys,
        issuer: ctx.config.publicBaseUrl,
      });
      const issuer: TokenIssuer = {
        issue: createIssue({
          ctx,
          persons,
          keys,
          firstTokens: createFirstTokens(ctx.storage, ctx.clock),
          reserved: reservedClaims(ctx.config.headerPrefix),
          lifetimeSeconds,
        }),
        validate: (token, orgId) => validator.validate(token, orgId),
        revoke: createRevoke({ storage: ctx.storage, hooks: ctx.hooks, validator }),
        verifyIdToken: createIdTokenVerifier({ keys, issuer: ctx.config.publicBaseUrl }),
        signLogoutToken: createLogoutTokenSigner({
          keys,
          clock: ctx.clock,
          issuer: ctx.config.publicBaseUrl,
        }),
      };
      const routes = tokenRoutes(ctx, issuer, persons).use(
        wellKnownRoutes(ctx.config.publicBaseUrl, keys, maxAge).use(
          organizationMetadataRoutes(ctx.config.publicBaseUrl, ctx.orgs, maxAge),
        ),
      );
      return { routes, provide: { tokenIssuer: issuer }, attach: [forgetDeletedPerson, revokeEarlierTokens] };
    },
  });
};
