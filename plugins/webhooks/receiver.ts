/**
 * Verifying a webhook request, for TypeScript receivers: the spec's six checks in one call. Web APIs
 * and jose only, so it runs on Bun, Node, Deno and edge runtimes; it ships as TypeScript source, which
 * Bun and Deno load as is and Node loads through a TypeScript loader or a bundler.
 *
 * @example
 * import { createWebhookVerifier } from 'identity-service/receiver';
 *
 * const verifier = createWebhookVerifier({ baseUrl: 'https://ids.example.com', orgId: '<your org id>' });
 * Bun.serve({
 *   async fetch(request) {
 *     try {
 *       const { claims, event } = await verifier.verify(request, { webhookId: '<id>' });
 *       if (seen.has(claims.sub)) return new Response(null, { status: 204 }); // delivered twice
 *       await handle(event);
 *       return new Response(null, { status: 204 });
 *     } catch (e) {
 *       if (e instanceof WebhookVerificationError) return new Response(e.code, { status: 401 });
 *       throw e;
 *     }
 *   },
 * });
 */
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify, type RemoteJWKSetOptions } from 'jose';

export type WebhookVerificationCode =
  | 'ERR_WEBHOOK_MALFORMED'
  | 'ERR_WEBHOOK_SIGNATURE'
  | 'ERR_WEBHOOK_KEYS_UNAVAILABLE'
  | 'ERR_WEBHOOK_EXPIRED'
  | 'ERR_WEBHOOK_AUDIENCE'
  | 'ERR_WEBHOOK_ISSUER'
  | 'ERR_WEBHOOK_TARGET_URL'
  | 'ERR_WEBHOOK_ID'
  | 'ERR_WEBHOOK_TRIGGER';

/** A request that failed a check; `code` says which, stable across versions. */
export class WebhookVerificationError extends Error {
  constructor(
    readonly code: WebhookVerificationCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'WebhookVerificationError';
  }
}

/** The claims of a webhook JWT (spec, Events > Delivery to webhooks). */
export interface WebhookClaims extends JWTPayload {
  jti: string;
  aud: string;
  /** The trigger instance: the event's event_id for events. Deduplicate on it. */
  sub: string;
  iss: string;
  iat: number;
  exp: number;
  webhook_id: string;
  target_url: string;
  trigger_type: 'event' | 'sync_hook';
  trigger_name: string;
  trigger_content: Record<string, unknown>;
}

export interface WebhookVerifierOptions {
  /** The service's base address: the JWT's `iss`, and where the keys are fetched from. */
  baseUrl: string;
  /** Your organization ID: the JWT's `aud`, and the `Service-OrgID` of the key request. */
  orgId: string;
  /** The prefix of the organization header. @default 'Service' */
  headerPrefix?: string;
  /** Where the key set is. @default `${baseUrl}/organizations/webhooks/verification-jwks` */
  jwksUrl?: string;
  /** Seconds of clock skew tolerated on `exp`. @default 0 */
  clockToleranceSeconds?: number;
  /** Options of jose's remote key set (cache age, cooldown, timeout). */
  jwks?: Pick<RemoteJWKSetOptions, 'cacheMaxAge' | 'cooldownDuration' | 'timeoutDuration'>;
}

/** What a request is expected to be, beyond the checks every request must pass. */
export interface ExpectedWebhook {
  webhookId?: string;
  triggerType?: 'event' | 'sync_hook';
  /** The trigger's name; `MitmAttackDetectedV1` and `MitmAttackDetected_v1` are the same trigger. */
  triggerName?: string;
  /**
   * The URL that received the request, as registered (behind a proxy, `request.url` may show an
   * internal address). @default request.url
   */
  url?: string;
}

/** The raw form of a request: its body and the URL it arrived at. */
export interface RawWebhookRequest {
  body: string;
  url: string;
}

// The spec's trigger list writes `MitmAttackDetectedV1` for the event `MitmAttackDetected_v1`: both
// spellings name one trigger (the service sends the latter). Kept here rather than imported from the
// event catalogue, so that the receiver stays a small module of Web APIs and jose.
const TRIGGER_ALIASES: ReadonlyMap<string, string> = new Map([
  ['MitmAttackDetectedV1', 'MitmAttackDetected_v1'],
]);
const triggerNameOf = (name: unknown) =>
  typeof name === 'string' ? (TRIGGER_ALIASES.get(name) ?? name) : name;

const sameUrl = (a: string, b: string) => {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
};

function fromJose(e: unknown): WebhookVerificationError {
  const code = (e as { code?: string }).code;
  const message = (e as Error).message;
  if (e instanceof errors.JWTExpired)
    return new WebhookVerificationError('ERR_WEBHOOK_EXPIRED', 'the JWT has expired', { cause: e });
  if (
    e instanceof errors.JWKSTimeout ||
    code === 'ERR_JWKS_INVALID' ||
    (code === 'ERR_JOSE_GENERIC' && message.includes('JSON Web Key Set HTTP response'))
  )
    return new WebhookVerificationError(
      'ERR_WEBHOOK_KEYS_UNAVAILABLE',
      `the key set could not be fetched: ${message}`,
      { cause: e },
    );
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'aud')
      return new WebhookVerificationError('ERR_WEBHOOK_AUDIENCE', 'aud is not this organization', {
        cause: e,
      });
    if (e.claim === 'iss')
      return new WebhookVerificationError('ERR_WEBHOOK_ISSUER', 'iss is not the expected base URL', {
        cause: e,
      });
    return new WebhookVerificationError('ERR_WEBHOOK_MALFORMED', message, { cause: e });
  }
  if (e instanceof errors.JWSInvalid || e instanceof errors.JWTInvalid)
    return new WebhookVerificationError('ERR_WEBHOOK_MALFORMED', `the body is not a valid JWT: ${message}`, {
      cause: e,
    });
  if (e instanceof TypeError || (e instanceof Error && !(e instanceof errors.JOSEError)))
    return new WebhookVerificationError(
      'ERR_WEBHOOK_KEYS_UNAVAILABLE',
      `the key set could not be fetched: ${message}`,
      { cause: e },
    );
  return new WebhookVerificationError('ERR_WEBHOOK_SIGNATURE', `the signature does not verify: ${message}`, {
    cause: e,
  });
}

/**
 * Makes a verifier for one organization. It fetches the key set once and caches it (jose's remote key
 * set: a key id it has not seen makes it fetch again, at most every 30 s by default), so keep one
 * verifier for the life of the process: the key endpoint is rate-limited.
 */
export function createWebhookVerifier(options: WebhookVerifierOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const jwksUrl = options.jwksUrl ?? `${baseUrl}/organizations/webhooks/verification-jwks`;
  const keys = createRemoteJWKSet(new URL(jwksUrl), {
    ...options.jwks,
    headers: { [`${options.headerPrefix ?? 'Service'}-OrgID`]: options.orgId },
  });

  return {
    /**
     * Runs the six checks of the spec on a request (or its body and URL): 1. the signature, by the key
     * whose `kid` the header names; 2. `exp`; 3. `aud` is the organization; 4. `iss` is the base URL;
     * 5. `target_url` is the URL that received the request; 6. optionally the webhook and trigger.
     * Throws WebhookVerificationError; returns the claims and the event (`trigger_content`).
     */
    async verify(
      request: Request | RawWebhookRequest,
      expected: ExpectedWebhook = {},
    ): Promise<{ claims: WebhookClaims; event: Record<string, unknown> }> {
      const body = request instanceof Request ? await request.text() : request.body;
      const url = expected.url ?? request.url;
      let claims: WebhookClaims;
      try {
        const verified = await jwtVerify(body.trim(), keys, {
          algorithms: ['ES256'],
          audience: options.orgId,
          issuer: baseUrl,
          requiredClaims: ['exp', 'iat', 'jti', 'sub'],
          clockTolerance: options.clockToleranceSeconds ?? 0,
        });
        claims = verified.payload as WebhookClaims;
      } catch (e) {
        throw fromJose(e);
      }
      if (typeof claims.target_url !== 'string' || !sameUrl(claims.target_url, url))
        throw new WebhookVerificationError(
          'ERR_WEBHOOK_TARGET_URL',
          `target_url ${JSON.stringify(claims.target_url)} is not the URL that received the request (${url})`,
        );
      if (expected.webhookId !== undefined && claims.webhook_id !== expected.webhookId)
        throw new WebhookVerificationError(
          'ERR_WEBHOOK_ID',
          `webhook_id ${JSON.stringify(claims.webhook_id)} is not ${expected.webhookId}`,
        );
      if (
        (expected.triggerType !== undefined && claims.trigger_type !== expected.triggerType) ||
        (expected.triggerName !== undefined &&
          triggerNameOf(claims.trigger_name) !== triggerNameOf(expected.triggerName))
      )
        throw new WebhookVerificationError(
          'ERR_WEBHOOK_TRIGGER',
          `trigger ${claims.trigger_type}/${claims.trigger_name} is not the one expected`,
        );
      return { claims, event: claims.trigger_content };
    },
  };
}

export type WebhookVerifier = ReturnType<typeof createWebhookVerifier>;

const verifiers = new Map<string, WebhookVerifier>();

/**
 * Verifies a webhook request with a verifier kept per (base URL, organization), so its key set is
 * fetched once and cached across calls. See `createWebhookVerifier` for the checks.
 *
 * @example
 * const { claims, event } = await verifyWebhookRequest(request, { baseUrl, orgId }, { webhookId });
 */
export function verifyWebhookRequest(
  request: Request | RawWebhookRequest,
  options: WebhookVerifierOptions,
  expected: ExpectedWebhook = {},
) {
  const key = JSON.stringify([options.baseUrl, options.orgId, options.headerPrefix, options.jwksUrl]);
  let verifier = verifiers.get(key);
  if (!verifier) {
    verifier = createWebhookVerifier(options);
    verifiers.set(key, verifier);
  }
  return verifier.verify(request, expected);
}
