import { Elysia } from 'elysia';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { requestContextReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { createCors } from './api/cors.ts';
import { ingestRoutes } from './api/ingest-routes.ts';
import { logoutRoutes } from './api/logout.ts';
import { originRoutes } from './api/origin-routes.ts';
import { createPersonTokens } from './api/person-token.ts';
import { migrations } from './migrations/index.ts';
import { type SdkOptions, sdkSettings } from './options.ts';
import { createOriginStore } from './store/origins.ts';

export { SDK_INGEST } from './api/ingest-routes.ts';
export { SdkErrors } from './errors.ts';

export type { SdkOptions };

/**
 * The browser SDK's end-user routes: POST /sdk/events (ServiceSDKLoaded_v1, VirtualPageLoaded_v1,
 * PersonIdentified_v1) and POST /logout (revokes the person's token, PersonLoggedOut_v1), with CORS
 * limited to each organization's allowed origins (GET, PUT /organizations/allowed-origins) and a
 * per-address rate limit. Requires personDirectory (persons) and tokenIssuer (tokens).
 *
 * @example defineService({ plugins: [persons(), tokens(), sdk({ rateLimit: { perMinute: 1200, burst: 300 } })] })
 */
export const sdk = (options: SdkOptions = {}) => {
  sdkSettings.checkOptions(options);
  return definePlugin({
    id: 'sdk',
    migrations,
    settings: sdkSettings.schema,
    requires: { directory: personDirectory, issuer: tokenIssuer },
    emits: ['ServiceSDKLoaded_v1', 'VirtualPageLoaded_v1', 'PersonIdentified_v1', 'PersonLoggedOut_v1'],
    setup(ctx, { directory, issuer }) {
      const rate = sdkSettings.resolve(ctx.settings, options).SDK_RATE_LIMIT;
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
