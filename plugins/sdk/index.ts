import { Elysia } from 'elysia';
import * as v from 'valibot';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { envRate, type Rate } from '../../core/contract/settings.ts';
import { requestContextReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { createCors } from './api/cors.ts';
import { ingestRoutes } from './api/ingest-routes.ts';
import { logoutRoutes } from './api/logout.ts';
import { originRoutes } from './api/origin-routes.ts';
import { createPersonTokens } from './api/person-token.ts';
import { migrations } from './migrations/index.ts';
import { createOriginStore } from './store/origins.ts';

export { SDK_INGEST } from './api/ingest-routes.ts';
export { SdkErrors } from './errors.ts';

export interface SdkOptions {
  /**
   * SDK events (and logouts) per client address and organization; SDK_RATE_LIMIT wins.
   * @default { perMinute: 600, burst: 200 }
   */
  rateLimit?: Rate;
}

const settings = v.object({ SDK_RATE_LIMIT: envRate('SDK_RATE_LIMIT') });

/**
 * The browser SDK's end-user routes: POST /sdk/events (ServiceSDKLoaded_v1, VirtualPageLoaded_v1,
 * PersonIdentified_v1) and POST /logout (revokes the person's token, PersonLoggedOut_v1), with CORS
 * limited to each organization's allowed origins (GET, PUT /organizations/allowed-origins) and a
 * per-address rate limit. Requires personDirectory (persons) and tokenIssuer (tokens).
 *
 * @example defineService({ plugins: [persons(), tokens(), sdk({ rateLimit: { perMinute: 1200, burst: 300 } })] })
 */
export const sdk = (options: SdkOptions = {}) => {
  const optionRate = options.rateLimit ?? { perMinute: 600, burst: 200 };
  for (const [k, n] of Object.entries(optionRate))
    if (!Number.isInteger(n) || n < 1 || n > 1_000_000)
      throw new Error(`sdk: rateLimit.${k} must be an integer from 1 to 1000000 (got ${n})`);
  return definePlugin({
    id: 'sdk',
    migrations,
    settings,
    requires: { directory: personDirectory, issuer: tokenIssuer },
    emits: ['ServiceSDKLoaded_v1', 'VirtualPageLoaded_v1', 'PersonIdentified_v1', 'PersonLoggedOut_v1'],
    setup(ctx, { directory, issuer }) {
      const rate = ctx.settings.SDK_RATE_LIMIT ?? optionRate;
      const origins = createOriginStore(ctx.storage, ctx.clock);
      const cors = createCors(origins, ctx.headers);
      const shared = {
        cors,
        tokens: createPersonTokens(issuer, directory),
        readContext: requestContextReader(ctx.headers),
        // One budget for both routes: a logout costs one event.
        perAddress: createTokenBuckets({
          name: 'sdk-address',
          clock: ctx.clock,
          storage: ctx.storage,
          perMinute: rate.perMinute,
          capacity: rate.burst,
        }),
        rate,
      };
      return {
        routes: new Elysia()
          .use(originRoutes(ctx, origins))
          .use(cors.routes)
          .use(ingestRoutes(ctx, shared))
          .use(logoutRoutes(ctx, { ...shared, issuer })),
      };
    },
  });
};
