import {
  createLocalJWKSet,
  decodeProtectedHeader,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  jwtVerify,
} from 'jose';
import { OAuthError } from '../../../core/capabilities/oauth2-server.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';
import { organizationIssuer } from '../../../core/tokens/issuers.ts';
import type { AssertionReplayStore } from '../store/assertions.ts';
import { clientSecretContext } from '../store/clients.ts';
import type { KnownClient } from './cache.ts';
import type { ClientKeySets } from './key-sets.ts';

/** RFC 7523 §2.2: the client_assertion_type of a JWT client assertion. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * What a private_key_jwt client may sign with; alg none never verifies. Ed25519 is the fully specified
 * name of EdDSA with that curve (RFC 9864), which oauth4webapi and openid-client send.
 */
export const PRIVATE_KEY_JWT_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'] as const;
/** What a client_secret_jwt client signs with: HMAC keyed by its secret. */
export const CLIENT_SECRET_JWT_ALGS = ['HS256'] as const;

/** Seconds of clock difference tolerated on exp, iat and nbf. */
export const ASSERTION_CLOCK_TOLERANCE_SECONDS = 10;
/** An assertion may not expire further ahead than this: a long-lived one is a bearer secret. */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;
/** jti values longer than this are refused. */
const MAX_JTI_LENGTH = 256;

const refused = (description: string) => new OAuthError('invalid_client', description, 401);

/**
 * Verifies client assertions (RFC 7523 §3): a client registered for private_key_jwt signs with one of the
 * keys of its jwks or jwks_uri (the header's kid chooses), one registered for client_secret_jwt with HS256
 * keyed by its secret (kept sealed for it). iss and sub are the client_id, aud names this server (its
 * issuer or one of its endpoints), exp is set and at most five minutes ahead, and the jti is used once.
 */
export function createAssertionVerifier(deps: {
  clock: Clock;
  secrets: SecretBox;
  keySets: ClientKeySets;
  replay: AssertionReplayStore;
  /** The issuer (PUBLIC_BASE_URL): the token endpoint URL and the issuer are what aud must contain. */
  issuer: string;
}) {
  const { clock, secrets, keySets, replay, issuer } = deps;
  const tokenEndpoint = `${issuer}/oauth2/tokens`;
  // RFC 9126 §2: the pushed authorization request endpoint is an audience too.
  const audiences = [
    issuer,
    tokenEndpoint,
    `${tokenEndpoint}/introspect`,
    `${tokenEndpoint}/revoke`,
    `${issuer}/oauth2/par`,
  ];

  const options = (client: KnownClient['client'], algorithms: readonly string[]) => ({
    algorithms: [...algorithms],
    issuer: client.clientId,
    subject: client.clientId,
    // Its organization's own issuer too: what a client that discovered that issuer puts in aud.
    audience: [...audiences, organizationIssuer(issuer, client.orgId)],
    currentDate: new Date(clock.now()),
    clockTolerance: ASSERTION_CLOCK_TOLERANCE_SECONDS,
    requiredClaims: ['exp', 'jti'],
  });
  // Inline keys were checked as public JWKs when registered, fetched ones when fetched (key-sets.ts).
  const withKeys = async (
    assertion: string,
    keys: { keys: readonly object[] },
    client: KnownClient['client'],
  ) =>
    (
      await jwtVerify(
        assertion,
        createLocalJWKSet(keys as JSONWebKeySet),
        options(client, PRIVATE_KEY_JWT_ALGS),
      )
    ).payload;

  const explain = (e: unknown, clientId: string): unknown => {
    if (e instanceof OAuthError) return e;
    if (e instanceof errors.JWTExpired) return refused('client_assertion has expired (exp)');
    if (e instanceof errors.JWTClaimValidationFailed) {
      if (e.reason === 'missing')
        return refused(`client_assertion must carry ${e.claim} (RFC 7523 section 3)`);
      switch (e.claim) {
        case 'iss':
        case 'sub':
          return refused(
            `client_assertion's ${e.claim} must be the client_id ${clientId} (RFC 7523 section 3)`,
          );
        case 'aud':
          return refused(
            `client_assertion's aud must name this server: its issuer ${issuer} or its token endpoint ${tokenEndpoint} (RFC 7523 section 3)`,
          );
        default:
          return refused(`client_assertion's ${e.claim} is not acceptable: ${e.message}`);
      }
    }
    if (e instanceof errors.JWKSNoMatchingKey)
      return refused(
        "client_assertion names no key of the client's (kid and alg must match one of its keys)",
      );
    if (e instanceof errors.JWKSMultipleMatchingKeys)
      return refused('client_assertion has no kid and several keys of the client match: name one with kid');
    if (e instanceof errors.JWSSignatureVerificationFailed)
      return refused("client_assertion's signature does not verify with the client's keys");
    if (e instanceof errors.JOSEError)
      return refused(`client_assertion is not a valid signed JWT (${e.code})`);
    return e;
  };

  /** Private keys: inline jwks, or jwks_uri fetched again once for a kid the cached set lacks. */
  const verifyPrivateKeyJwt = async (known: KnownClient, assertion: string): Promise<JWTPayload> => {
    const { clientId } = known.client;
    const { jwks, jwksUri } = known.auth;
    if (jwks) return withKeys(assertion, jwks, known.client);
    if (!jwksUri)
      throw refused(`client ${clientId} has no keys (jwks or jwks_uri) to verify its assertion with`);
    const set = await keySets.get(jwksUri);
    try {
      return await withKeys(assertion, set, known.client);
    } catch (e) {
      const again = e instanceof errors.JWKSNoMatchingKey ? keySets.refetch(jwksUri) : undefined;
      if (!again) throw e;
      return withKeys(assertion, await again, known.client);
    }
  };

  const verifyClientSecretJwt = async (known: KnownClient, assertion: string): Promise<JWTPayload> => {
    const { clientId } = known.client;
    const sealed = known.auth.secretSealed;
    if (sealed === null) throw refused(`client ${clientId} has no secret kept for client_secret_jwt`);
    const key = new TextEncoder().encode(await secrets.open(sealed, clientSecretContext(clientId)));
    return (await jwtVerify(assertion, key, options(known.client, CLIENT_SECRET_JWT_ALGS))).payload;
  };

  return {
    /** Resolves when the assertion authenticates this client; rejects with invalid_client otherwise. */
    async verify(known: KnownClient, assertion: string): Promise<void> {
      const { clientId } = known.client;
      const method = known.auth.method;
      if (method !== 'private_key_jwt' && method !== 'client_secret_jwt')
        throw refused(
          method === 'none'
            ? `client ${clientId} is public: it sends client_id alone, not a client_assertion`
            : `client ${clientId} is registered for ${method}: authenticate with its secret, not a client_assertion (its token_endpoint_auth_method would have to be private_key_jwt or client_secret_jwt)`,
        );
      let alg: unknown;
      try {
        alg = decodeProtectedHeader(assertion).alg;
      } catch {
        throw refused('client_assertion is not a JWT (a signed JWS in compact form)');
      }
      if (typeof alg !== 'string' || alg.toLowerCase() === 'none')
        throw refused('client_assertion must be signed: alg none is refused');
      const allowed: readonly string[] =
        method === 'private_key_jwt' ? PRIVATE_KEY_JWT_ALGS : CLIENT_SECRET_JWT_ALGS;
      if (!allowed.includes(alg))
        throw refused(
          `client ${clientId} is registered for ${method}: its assertions are signed with ${allowed.join(', ')}, not ${alg}`,
        );
      let payload: JWTPayload;
      try {
        payload =
          method === 'private_key_jwt'
            ? await verifyPrivateKeyJwt(known, assertion)
            : await verifyClientSecretJwt(known, assertion);
      } catch (e) {
        throw explain(e, clientId);
      }
      const exp = payload.exp!;
      if (exp - clock.now() / 1000 > MAX_ASSERTION_LIFETIME_SECONDS + ASSERTION_CLOCK_TOLERANCE_SECONDS)
        throw refused(
          `client_assertion's exp is too far ahead: an assertion may live at most ${MAX_ASSERTION_LIFETIME_SECONDS} seconds`,
        );
      const jti = payload.jti;
      if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH)
        throw refused(`client_assertion's jti must be a string of 1 to ${MAX_JTI_LENGTH} characters`);
      if (!(await replay.firstUse(clientId, jti, exp * 1000)))
        throw refused('client_assertion was used before: its jti is accepted once (RFC 7523 section 3)');
    },
  };
}

export type AssertionVerifier = ReturnType<typeof createAssertionVerifier>;
