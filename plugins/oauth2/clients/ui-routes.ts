import { Elysia } from 'elysia';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../core/http/envelope.ts';
import { consistencyHeaders } from '../../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { ClientIdParams } from '../schema.ts';
import type { ClientStore } from '../store/clients.ts';
import type { ClientCache } from './cache.ts';
import {
  MAX_UI_CONFIGURATION_BYTES,
  refuseUnfitConfiguration,
  UiConfigurationSchema,
} from './ui-configuration.ts';

const PATH = '/oauth2/clients/:oauth_client_id/ui-configuration';
const TAGS = ['OAuth2'];
const security = [{ orgId: [], apiKey: [] }];
const USED =
  'The hosted login uses pageTitle, pageBackgroundColor, logoUrl, faviconUrl, supportURL, textOverrides and handleTypes; dynamicFlowConfig, dynamicFlowEnabled, showBadge, storeLastFactor, themeVars and alternativeAuthURL are stored and answered but change nothing.';

/**
 * GET and PUT /oauth2/clients/{id}/ui-configuration: how the hosted login looks for one client, stored
 * with the client (deleted with it). Another organization's client is a 404, as on the client routes.
 */
export function uiConfigurationRoutes(ctx: ServiceContext, store: ClientStore, cache: ClientCache) {
  return new Elysia()
    .use(ctx.auth)
    .get(
      PATH,
      async ({ org, params }) => ok((await store.get(org.id, params.oauth_client_id)).uiConfiguration ?? {}),
      {
        apiKey: true,
        params: ClientIdParams,
        response: { 200: resultOf(UiConfigurationSchema), ...errorResponses },
        detail: {
          operationId: 'GetOauth2UiConfiguration',
          summary: 'Retrieve the configuration for the hosted UI',
          description: `The configuration as last stored, or {} when never set. ${USED}`,
          tags: TAGS,
          security,
        },
      },
    )
    .put(
      PATH,
      async ({ org, params, body, request, set }) => {
        const row = await store.get(org.id, params.oauth_client_id);
        const stored = await consistentWrite(request, ctx.headers, () => store.setUiConfiguration(row, body));
        // The hosted login reads clients through the cache: this replica sees the change at once.
        cache.forget(row.clientId);
        set.status = 201;
        return ok(stored);
      },
      {
        apiKey: true,
        headers: consistencyHeaders(ctx.headers),
        params: ClientIdParams,
        parse: 'json',
        transform: refuseUnfitConfiguration,
        body: UiConfigurationSchema,
        response: { 201: resultOf(UiConfigurationSchema), ...errorResponses, ...writeErrorResponses },
        detail: {
          operationId: 'PutOauth2UiConfiguration',
          summary: 'Modify the configuration for the hosted UI',
          description: `Replaces the whole configuration (members left out are gone) and answers it as stored, with 201 as the reference does. URLs are https (http only on a loopback host); pageBackgroundColor is a CSS colour of a small grammar (hex, rgb()/rgba(), a few names); members the reference does not name are kept as given. The body is at most ${MAX_UI_CONFIGURATION_BYTES} bytes of compact JSON. 400 names the member and the rule. Other replicas' hosted logins see a change within 5 s. ${USED}`,
          tags: TAGS,
          security,
        },
      },
    );
}
