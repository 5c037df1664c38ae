import { Elysia } from 'elysia';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { DirectRoute } from '../../../core/http/direct-routes.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { AccessTokens } from './access-tokens.ts';
import {
  deviceAuthorizationDoc,
  introspectDoc,
  preflightDoc,
  revokeAllDoc,
  revokeDoc,
  tokenDoc,
} from './docs.ts';
import {
  deviceAuthorizationEndpoint,
  type EndpointDeps,
  type OAuthEndpoint,
  tokenEndpoint,
  whenReady,
} from './endpoint.ts';
import { introspectionEndpoint, revocationEndpoint } from './introspection.ts';
import { pushedAuthorizationEndpoint } from './pushed-authorization.ts';
import { pushedAuthorizationDoc } from './pushed-authorization-doc.ts';
import type { OAuthAnswer } from './responses.ts';
import { revokeAllEndpoint } from './revoke-all.ts';

/**
 * CORS for the token and revocation endpoints, so a browser app (a public client with PKCE) can call
 * them: any origin, since the request carries the client's credentials or code, never a cookie.
 * Introspection is for confidential clients on servers and has none.
 */
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'www-authenticate, dpop-nonce',
};
const PREFLIGHT = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'authorization, content-type, dpop',
  'access-control-max-age': '600',
};

/** The answer's headers, with CORS for the endpoints browser apps call, when the request has an Origin. */
function headersOf(answer: OAuthAnswer, request: Request, cors: boolean): Record<string, string> {
  return cors && request.headers.has('origin') ? { ...answer.headers, ...CORS } : answer.headers;
}

/** The token, introspection and revocation endpoints, made once and shared by both kinds of route. */
export function tokenEndpoints(
  deps: EndpointDeps,
  accessTokens: AccessTokens,
  persons: () => PersonDirectory | undefined,
  clock: Clock,
) {
  return [
    { path: '/oauth2/tokens', endpoint: tokenEndpoint(deps), cors: true },
    {
      path: '/oauth2/tokens/introspect',
      endpoint: introspectionEndpoint(deps, accessTokens, persons),
      cors: false,
    },
    { path: '/oauth2/tokens/revoke', endpoint: revocationEndpoint(deps, accessTokens), cors: true },
    // For servers (confidential clients only): no CORS.
    { path: '/oauth2/tokens/revoke-all', endpoint: revokeAllEndpoint(deps, clock), cors: false },
    // RFC 8628: devices, and browser apps with a public client.
    { path: '/oauth2/device_authorization', endpoint: deviceAuthorizationEndpoint(deps), cors: true },
    // RFC 9126: browser apps (public clients) push their requests too.
    { path: '/oauth2/par', endpoint: pushedAuthorizationEndpoint(deps), cors: true },
  ] as const;
}

type Endpoints = ReturnType<typeof tokenEndpoints>;

/**
 * The endpoints as direct routes: the front door answers their requests ahead of the app, so a
 * grant costs its own work and little else (the token endpoint is the service's busiest route).
 */
export function tokenDirectRoutes(endpoints: Endpoints): DirectRoute[] {
  return endpoints.map(({ path, endpoint, cors }) => ({
    method: 'POST' as const,
    path,
    handle: (request: Request, body: string) =>
      whenReady(endpoint(request, body), (answer) => ({
        status: answer.status,
        headers: headersOf(answer, request, cors),
        body: answer.body,
      })),
  }));
}

/**
 * POST /oauth2/tokens, /oauth2/tokens/introspect and /oauth2/tokens/revoke as app routes: documented in
 * OpenAPI, and answering what the direct routes leave to the app (a streamed or oversized body). Each
 * reads its form itself (`parse: 'none'`): duplicates must be seen, and the form is parsed once, cheaply.
 */
export function tokenRoutes(endpoints: Endpoints) {
  type Set = { status?: number | string; headers: Record<string, string | number> };
  const answering =
    ({ endpoint, cors }: { endpoint: OAuthEndpoint; cors: boolean }) =>
    async ({ request, set }: { request: Request; set: Set }) => {
      const answer = await endpoint(request, await request.text());
      set.status = answer.status;
      Object.assign(set.headers, headersOf(answer, request, cors));
      return answer.body;
    };
  const [token, introspect, revoke, revokeAll, device, pushed] = [
    answering(endpoints[0]),
    answering(endpoints[1]),
    answering(endpoints[2]),
    answering(endpoints[3]),
    answering(endpoints[4]),
    answering(endpoints[5]),
  ];
  const preflight = ({ set }: { set: Set }) => {
    set.status = 204;
    Object.assign(set.headers, PREFLIGHT);
  };
  return new Elysia()
    .options('/oauth2/tokens', preflight, preflightDoc('/oauth2/tokens'))
    .options('/oauth2/tokens/revoke', preflight, preflightDoc('/oauth2/tokens/revoke'))
    .post('/oauth2/tokens', token, { parse: 'none', detail: tokenDoc })
    .post('/oauth2/tokens/introspect', introspect, { parse: 'none', detail: introspectDoc })
    .post('/oauth2/tokens/revoke', revoke, { parse: 'none', detail: revokeDoc })
    .post('/oauth2/tokens/revoke-all', revokeAll, { parse: 'none', detail: revokeAllDoc })
    .options('/oauth2/device_authorization', preflight, preflightDoc('/oauth2/device_authorization'))
    .post('/oauth2/device_authorization', device, { parse: 'none', detail: deviceAuthorizationDoc })
    .options('/oauth2/par', preflight, preflightDoc('/oauth2/par'))
    .post('/oauth2/par', pushed, { parse: 'none', detail: pushedAuthorizationDoc });
}
