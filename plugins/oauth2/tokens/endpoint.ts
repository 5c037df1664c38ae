import { DEVICE_CODE_GRANT, type OAuthClient, OAuthError } from '../../../core/capabilities/oauth2-server.ts';
import type { AnalyticsContext } from '../../../core/capabilities/person-directory.ts';
import { requestLogFields, setRequestOrg } from '../../../core/http/request-facts.ts';
import { urlPathOf } from '../../../core/http/request-target.ts';
import type { Logger } from '../../../core/log.ts';
import type { CounterMetric, CounterSeries } from '../../../core/metrics/types.ts';
import type { AssertionVerifier } from '../clients/assertions.ts';
import { authenticateClient, readPresentedClient } from '../clients/authenticate.ts';
import type { ClientCache } from '../clients/cache.ts';
import type { LastUsed } from '../clients/last-used.ts';
import type { DPoPChecker } from '../dpop/server.ts';
import { readForm } from './form.ts';
import { answerFor, errorAnswer, jsonAnswer, type OAuthAnswer } from './responses.ts';
import type { OAuth2Registry } from './server.ts';

export interface EndpointDeps {
  clients: ClientCache;
  /** Verifies JWT client assertions (private_key_jwt, client_secret_jwt). */
  assertions: AssertionVerifier;
  registry: OAuth2Registry;
  lastUsed: LastUsed;
  /** DPoP proofs (RFC 9449) at the token endpoint. */
  dpop: DPoPChecker;
  /** The caller as events and hooks see it (core's analyticsReader). */
  analyticsOf: (request: Request) => AnalyticsContext;
  log: Logger;
  /** Access tokens issued, by grant type. */
  issued: CounterMetric<'grant_type'>;
}

/** A value now, or a promise of it: what the token endpoint's steps answer when they need not wait. */
export type Soon<T> = T | Promise<T>;

/** `f(value)` once `value` is there: at once for a value, by `then` for a promise. */
export const whenReady = <T, U>(value: Soon<T>, f: (v: T) => Soon<U>): Soon<U> =>
  value instanceof Promise ? value.then(f) : f(value);

/**
 * An OAuth endpoint: the request and its body, read whole, to the answer. It answers at once (not by a
 * promise) when nothing it does has to wait; a grant waits for its signature (computed off the event
 * loop's thread: SignOptions.offThread).
 */
export type OAuthEndpoint = (request: Request, body: string) => Soon<OAuthAnswer>;

/**
 * Runs an OAuth endpoint: reads the form, authenticates the client (one method, RFC 6749 §2.3), runs
 * `handle`, and answers its refusals in the OAuth shape. Anything unexpected is logged and answered
 * as server_error.
 */
export function oauthEndpoint(
  deps: EndpointDeps,
  handle: (client: OAuthClient, params: Map<string, string>, request: Request) => Soon<OAuthAnswer>,
): OAuthEndpoint {
  const failed = (request: Request, e: unknown): OAuthAnswer => {
    const answer = answerFor(e);
    if (answer) return answer;
    deps.log.error('OAuth 2.0 endpoint failed', {
      ...requestLogFields(request),
      err: e,
      path: urlPathOf(request.url),
    });
    return errorAnswer(500, 'server_error', 'internal error');
  };
  return (request, body) => {
    try {
      const params = readForm(request, body);
      const client = authenticateClient(
        deps.clients,
        readPresentedClient(request.headers, params),
        deps.assertions,
      );
      const answer = whenReady(client, (c) => {
        // The request acts for the client's organization from here: its log lines say so.
        setRequestOrg(request, c.orgId);
        return handle(c, params, request);
      });
      return answer instanceof Promise ? answer.catch((e: unknown) => failed(request, e)) : answer;
    } catch (e) {
      return failed(request, e);
    }
  };
}

/**
 * POST /oauth2/tokens: dispatches grant_type to the grant registered for it. Unknown (or not
 * registered in this deployment): unsupported_grant_type; not among the client's grant types:
 * unauthorized_client; without a DPoP proof from a client with dpop_bound_access_tokens:
 * invalid_dpop_proof.
 */
export function tokenEndpoint(deps: EndpointDeps): OAuthEndpoint {
  const { registry, lastUsed, analyticsOf } = deps;
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
  return oauthEndpoint(deps, (client, params, request) => {
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
    const run = (dpop: { jkt: string } | undefined) => {
      // The caller's context is built only for a grant that reads it (client_credentials does not).
      let analytics: AnalyticsContext | undefined;
      const body = grant.handle({
        client,
        params,
        ...(dpop ? { dpop } : {}),
        get request() {
          analytics ??= analyticsOf(request);
          return analytics;
        },
      });
      return whenReady(body, (b) => {
        lastUsed.seen(client.clientId);
        countIssued(grantType);
        return jsonAnswer(b);
      });
    };
    // Without a proof nothing waits here; with one, it is checked before the grant runs (RFC 9449 §5).
    if (!request.headers.has('dpop')) {
      // RFC 9449 §5.2: such a client's requests without the header are refused, whatever the grant. The
      // code is DPoP's own (as for a bound refresh token sent without a proof): what is wrong is the proof.
      if (client.dpopBoundAccessTokens)
        throw new OAuthError(
          'invalid_dpop_proof',
          `client ${client.clientId} has dpop_bound_access_tokens: every token request must carry a DPoP proof (the DPoP header, RFC 9449)`,
        );
      return run(undefined);
    }
    return deps.dpop.check(request).then(async (proof) => {
      const answer = await run(proof ? { jkt: proof.jkt } : undefined);
      const nonce = deps.dpop.nonce();
      return nonce ? { ...answer, headers: { ...answer.headers, 'dpop-nonce': await nonce } } : answer;
    });
  });
}

/**
 * POST /oauth2/device_authorization (RFC 8628 §3.1): the client authenticated as at the token endpoint
 * (a public client by client_id), and allowed the device_code grant, gets a device code and a user code
 * from the handler another plugin registered (oauth2-authorize, with the page where the person approves).
 */
export function deviceAuthorizationEndpoint(deps: EndpointDeps): OAuthEndpoint {
  const { registry, analyticsOf } = deps;
  return oauthEndpoint(deps, async (client, params, request) => {
    const handler = registry.device.handler;
    if (!handler)
      throw new OAuthError('unsupported_grant_type', 'the device authorization grant is not offered here');
    if (!client.grantTypes.includes(DEVICE_CODE_GRANT))
      throw new OAuthError(
        'unauthorized_client',
        `client ${client.clientId} may not use the ${DEVICE_CODE_GRANT} grant (its grant types: ${client.grantTypes.join(', ')})`,
      );
    return jsonAnswer(await handler.handle({ client, params, request: analyticsOf(request) }));
  });
}
