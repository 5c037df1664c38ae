import type { DeliveryErrorKind } from './http-delivery.ts';

/** What a guarded request may carry: the part of RequestInit that oauth4webapi, jose and providers send. */
export interface GuardedRequestInit {
  /** @default 'GET' */
  method?: string;
  headers?: HeadersInit;
  body?: string | URLSearchParams | Uint8Array | ArrayBuffer | null | undefined;
  signal?: AbortSignal | null | undefined;
  /** Accepted for fetch's sake and ignored: a redirect is never followed, the 3xx comes back as it is. */
  redirect?: RequestRedirect;
}

/**
 * A `fetch` for requests to addresses a tenant chose, through the address guard that webhook deliveries
 * pass: https only, every address the host resolves to vetted (public, or in the ranges the operator
 * allowed), the connection pinned to the vetted address, no redirect followed, the answer's body capped
 * and the whole request timed out. A request that gets no answer rejects with a GuardedFetchError whose
 * message is safe to show the tenant; the detail (addresses, ports, socket errors) goes to the operator's
 * log only. Assignable to oauth4webapi's `customFetch` and jose's `[customFetch]`.
 *
 * @example
 * const res = await ctx.outbound.sso('https://id.acme.example/.well-known/openid-configuration');
 */
export type GuardedFetch = (url: string | URL, init?: GuardedRequestInit) => Promise<Response>;

/** A guarded request that got no answer: `message` names no address, port or socket error. */
export class GuardedFetchError extends Error {
  constructor(
    readonly kind: DeliveryErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'GuardedFetchError';
  }
}

/**
 * The OutboundRequests port: the guarded fetches of the service, one per setting that names the private
 * ranges its requests may reach. Webhook deliveries and logout tokens go through HttpDelivery, which
 * shares the guard.
 */
export interface OutboundRequests {
  /** SSO providers' discovery, JWKS, token, userinfo and profile endpoints (SSO_ALLOW_PRIVATE). */
  readonly sso: GuardedFetch;
  /** OAuth clients' `jwks_uri`, for private_key_jwt client authentication (CLIENT_JWKS_ALLOW_PRIVATE). */
  readonly clientJwks: GuardedFetch;
  close(): Promise<void>;
}
