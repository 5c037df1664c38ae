import { type OAuthClient, OAuthError } from '../../core/capabilities/oauth2-server.ts';
import type { AnalyticsContext } from '../../core/capabilities/person-directory.ts';
import { requestContextOf } from '../../core/http/client.ts';
import { requestLogFields, setRequestOrg } from '../../core/http/request-facts.ts';
import type { Logger } from '../../core/log.ts';
import type { CounterMetric, CounterSeries } from '../../core/metrics/types.ts';
import { authenticateClient, presentedClient } from './client-auth.ts';
import type { ClientCache } from './client-cache.ts';
import { readForm } from './form.ts';
import type { LastUsed } from './last-used.ts';
import { answerFor, errorAnswer, jsonAnswer, type OAuthAnswer } from './responses.ts';
import type { OAuth2Registry } from './server.ts';

export interface EndpointDeps {
  clients: ClientCache;
  registry: OAuth2Registry;
  lastUsed: LastUsed;
  log: Logger;
  /** Access tokens issued, by grant type. */
  issued: CounterMetric<'grant_type'>;
}

/** The caller as events and hooks see it. */
export function analyticsOf(request: Request): AnalyticsContext {
  const { clientIp, userAgent, origin } = requestContextOf(request);
  return {
    ...(clientIp ? { clientIpAddress: clientIp } : {}),
    ...(userAgent ? { userAgent } : {}),
    ...(origin ? { origin } : {}),
  };
}

/**
 * Runs an OAuth endpoint: reads the form, authenticates the client (one method, RFC 6749 §2.3), runs
 * `handle`, and answers its refusals in the OAuth shape. Anything unexpected is logged and answered
 * as server_error.
 */
export function oauthEndpoint(
  deps: EndpointDeps,
  handle: (client: OAuthClient, params: Map<string, string>, request: Request) => Promise<OAuthAnswer>,
) {
  return async (request: Request): Promise<OAuthAnswer> => {
    try {
      const params = await readForm(request);
      const client = await authenticateClient(deps.clients, presentedClient(request.headers, params));
      // The request acts for the client's organization from here: its log lines say so.
      setRequestOrg(request, client.orgId);
      return await handle(client, params, request);
    } catch (e) {
      const answer = answerFor(e);
      if (answer) return answer;
      deps.log.error('OAuth 2.0 endpoint failed', {
        ...requestLogFields(request),
        err: e,
        path: new URL(request.url).pathname,
      });
      return errorAnswer(500, 'server_error', 'internal error');
    }
  };
}

/**
 * POST /oauth2/tokens: dispatches grant_type to the grant registered for it. Unknown (or not
 * registered in this deployment): unsupported_grant_type; not among the client's grant types:
 * unauthorized_client.
 */
export function tokenEndpoint(deps: EndpointDeps) {
  const { registry, lastUsed } = deps;
  // One series per grant type, taken on its first token (grants register after this plugin's setup).
  const issued = new Map<string, CounterSeries>();
  const countIssued = (grantType: string) => {
    let series = issued.get(grantType);
    if (series === undefined) {
      series = deps.issued.labels({ grant_type: grantType });
      issued.set(grantType, series);
    }
    series.inc();
  };
  return oauthEndpoint(deps, async (client, params, request) => {
    const grantType = params.get('grant_type');
    if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required');
    const grant = registry.grants.get(grantType);
    if (!grant)
      throw new OAuthError(
        'unsupported_grant_type',
        `grant_type ${JSON.stringify(grantType.slice(0, 64))} is not supported here (supported: ${[...registry.grants.keys()].join(', ')})`,
      );
    if (!client.grantTypes.includes(grantType))
      throw new OAuthError(
        'unauthorized_client',
        `client ${client.clientId} may not use the ${grantType} grant (its grant types: ${client.grantTypes.join(', ')})`,
      );
    // The caller's context is built only for a grant that reads it (client_credentials does not).
    let analytics: AnalyticsContext | undefined;
    const body = await grant.handle({
      client,
      params,
      get request() {
        analytics ??= analyticsOf(request);
        return analytics;
      },
    });
    lastUsed.seen(client.clientId);
    countIssued(grantType);
    return jsonAnswer(body);
  });
}
