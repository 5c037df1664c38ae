import * as v from 'valibot';

/**
 * The RFC 7591 client metadata names that POST and PATCH /oauth2/clients take beside the service's own:
 * their valibot entries, and the rules a single member can be checked by. Rules across members (scope
 * beside scopes, the method beside public, keys for private_key_jwt) are in ./rules.ts.
 */

/** RFC 7591 §2 token_endpoint_auth_method values this service accepts. */
export const TOKEN_ENDPOINT_AUTH_METHODS = [
  'client_secret_basic',
  'client_secret_post',
  'client_secret_jwt',
  'private_key_jwt',
  'none',
] as const;
export type TokenEndpointAuthMethod = (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];

/** JWK members that carry private or symmetric key material (RFC 7518 §6): a JWK Set here is public. */
export const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** At most this many keys in an inline `jwks`. */
export const MAX_CLIENT_KEYS = 20;

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it refuses
const noNul = v.regex(/^[^\u0000]*$/, 'must not contain the NUL character (\\u0000)');

/** Why a URL of the client's (jwks_uri, client_uri...) is refused, or undefined: absolute https, no fragment. */
export function httpsUrlProblem(uri: string): string | undefined {
  if (uri.includes('#')) return 'must not contain a fragment (#)';
  if (/\s/.test(uri)) return 'must not contain white space';
  if (uri.includes('\\')) return 'must not contain a backslash (\\)';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:') return `must use https (got the scheme ${url.protocol.slice(0, -1)})`;
  if (url.username || url.password) return 'must not carry a user name or password';
  return url.hostname ? undefined : 'must name a host';
}

/** Why one JWK of a client's `jwks` is refused, or undefined: a public RSA, EC or OKP key. */
export function publicJwkProblem(key: unknown): string | undefined {
  if (typeof key !== 'object' || key === null || Array.isArray(key)) return 'must be a JSON object (a JWK)';
  const jwk = key as Record<string, unknown>;
  const secret = PRIVATE_JWK_MEMBERS.filter((m) => m in jwk);
  if (secret.length)
    return `must be a public key: it carries private or symmetric key material (${secret.join(', ')}); give only the public part`;
  const str = (m: string) => typeof jwk[m] === 'string' && (jwk[m] as string).length > 0;
  if (jwk.kid !== undefined && (typeof jwk.kid !== 'string' || jwk.kid.length > 256))
    return 'kid must be a string of at most 256 characters';
  if (jwk.alg === 'none') return 'alg must not be none';
  switch (jwk.kty) {
    case 'RSA':
      return str('n') && str('e') ? undefined : 'an RSA key needs n and e';
    case 'EC':
      return jwk.crv === 'P-256' && str('x') && str('y')
        ? undefined
        : 'an EC key must be on P-256 (crv) with x and y (ES256)';
    case 'OKP':
      return jwk.crv === 'Ed25519' && str('x')
        ? undefined
        : 'an OKP key must be Ed25519 (crv) with x (EdDSA)';
    default:
      return `kty must be RSA, EC or OKP (got ${JSON.stringify(String(jwk.kty).slice(0, 20))})`;
  }
}

const httpsUrl = (description: string) =>
  v.pipe(
    v.string('must be a string'),
    v.maxLength(2000, 'must be at most 2000 characters'),
    v.check(
      (u) => httpsUrlProblem(u) === undefined,
      (i) => httpsUrlProblem(String(i.input))!,
    ),
    v.description(description),
  );

const text256 = (description: string) =>
  v.pipe(
    v.string('must be a string'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(256, 'must be at most 256 characters'),
    noNul,
    v.description(description),
  );

const tokenEndpointAuthMethod = v.pipe(
  v.picklist(TOKEN_ENDPOINT_AUTH_METHODS, `must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(', ')}`),
  v.description(
    'How the client authenticates at the token, introspection and revocation endpoints (RFC 7591): client_secret_basic or client_secret_post (its secret, by either), client_secret_jwt (an HS256 assertion made with its secret, RFC 7523; the secret is then kept sealed, not as a digest), private_key_jwt (an assertion signed with a key of its jwks or jwks_uri, RFC 7523), none (a public client). Default: none for public clients, client_secret_basic for confidential ones. It must agree with public.',
  ),
);

/** RFC 6749 §3.3 scope-token; the same rule as `scopes`. */
const SCOPE_STRING = /^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/;
const scope = v.pipe(
  v.string('must be a string'),
  v.maxLength(12_900, 'must be at most 12900 characters'),
  v.regex(
    SCOPE_STRING,
    'must be scope tokens separated by single spaces: visible ASCII except space, " and \\ (RFC 6749 §3.3)',
  ),
  v.check((s) => s.split(' ').length <= 100, 'must list at most 100 scopes'),
  v.check((s) => s.split(' ').every((t) => t.length <= 128), 'must hold scopes of at most 128 characters'),
  v.description(
    'The scopes as one space-delimited string (RFC 7591); an alias of scopes. Given both, they must name the same scopes.',
  ),
);

const jwks = v.pipe(
  v.object(
    {
      keys: v.pipe(
        v.array(
          v.pipe(
            v.record(v.string(), v.unknown(), 'must be a JSON object (a JWK)'),
            v.check(
              (k) => publicJwkProblem(k) === undefined,
              (i) => publicJwkProblem(i.input)!,
            ),
          ),
          'must be an array of JWKs',
        ),
        v.minLength(1, 'must hold at least one key'),
        v.maxLength(MAX_CLIENT_KEYS, `must hold at most ${MAX_CLIENT_KEYS} keys`),
      ),
    },
    'must be a JWK Set: {"keys": [...]}',
  ),
  v.description(
    "The client's public keys, a JWK Set (RFC 7517) of RSA, EC P-256 or Ed25519 keys, for private_key_jwt: keys with private members (d, p, q, dp, dq, qi, oth) or symmetric keys (k) are refused. Not together with jwks_uri.",
  ),
);

const contacts = v.pipe(
  v.array(
    v.pipe(
      v.string('must be a string'),
      v.maxLength(320, 'must be at most 320 characters'),
      v.email('must be an email address'),
    ),
    'must be an array of email addresses',
  ),
  v.maxLength(10, 'must list at most 10 addresses'),
  v.description(
    'Email addresses of the people responsible for the client (RFC 7591). Duplicates are dropped.',
  ),
);

const dpopBoundAccessTokens = v.pipe(
  v.boolean('must be true or false'),
  v.description(
    'Whether the client always uses DPoP (RFC 9449 section 5.2): true, every token request of the client without a valid DPoP proof is refused (invalid_dpop_proof), so all its access tokens are DPoP-bound (token_type DPoP, cnf.jkt). Default false: a proof is taken when sent.',
  ),
);

/** The RFC 7591 members of a create body (null is as absent). */
export const metadataCreateEntries = {
  token_endpoint_auth_method: v.optional(tokenEndpointAuthMethod),
  scope: v.optional(scope),
  jwks: v.optional(v.nullable(jwks)),
  jwks_uri: v.optional(
    v.nullable(
      httpsUrl(
        "Where the client's public keys (a JWK Set) are served, for private_key_jwt: https, no fragment; fetched through the address guard (CLIENT_JWKS_ALLOW_PRIVATE), cached and fetched again for a key ID it does not know. Not together with jwks.",
      ),
    ),
  ),
  client_uri: v.optional(v.nullable(httpsUrl("The client's home page (RFC 7591): https."))),
  logo_uri: v.optional(v.nullable(httpsUrl("The client's logo (RFC 7591): https."))),
  policy_uri: v.optional(v.nullable(httpsUrl("The client's privacy policy (RFC 7591): https."))),
  tos_uri: v.optional(v.nullable(httpsUrl("The client's terms of service (RFC 7591): https."))),
  contacts: v.optional(contacts),
  software_id: v.optional(
    v.nullable(text256('An identifier of the client software, the same for all its instances (RFC 7591).')),
  ),
  software_version: v.optional(v.nullable(text256('The version of the client software (RFC 7591).'))),
  require_pushed_authorization_requests: v.optional(
    v.pipe(
      v.boolean('must be true or false'),
      v.description(
        'RFC 9126 section 6: true, its authorization requests must be pushed first (POST /oauth2/par) and the authorization endpoint refuses one without the request_uri it answered. Default false.',
      ),
    ),
  ),
  dpop_bound_access_tokens: v.optional(dpopBoundAccessTokens),
};

/** The RFC 7591 members of a PATCH body: left out, kept; null removes a URL, the keys or a software member. */
export const metadataPatchEntries = metadataCreateEntries;

/** The RFC 7591 members of a client as the API answers them (set ones only, but the method and contacts). */
export const metadataResponseEntries = {
  token_endpoint_auth_method: v.pipe(
    v.string(),
    v.description('How the client authenticates (RFC 7591); its default when none was given.'),
  ),
  scope: v.pipe(v.string(), v.description('scopes as one space-delimited string (RFC 7591).')),
  jwks: v.optional(
    v.pipe(
      v.object({ keys: v.array(v.record(v.string(), v.unknown())) }),
      v.description('Its public keys; absent when none.'),
    ),
  ),
  jwks_uri: v.optional(v.pipe(v.string(), v.description('Where its public keys are; absent when none.'))),
  client_uri: v.optional(v.pipe(v.string(), v.description('Its home page; absent when none.'))),
  logo_uri: v.optional(v.pipe(v.string(), v.description('Its logo; absent when none.'))),
  policy_uri: v.optional(v.pipe(v.string(), v.description('Its privacy policy; absent when none.'))),
  tos_uri: v.optional(v.pipe(v.string(), v.description('Its terms of service; absent when none.'))),
  contacts: v.pipe(v.array(v.string()), v.description('Email addresses of its people; [] when none.')),
  software_id: v.optional(v.pipe(v.string(), v.description('Its software; absent when none.'))),
  software_version: v.optional(
    v.pipe(v.string(), v.description('The version of its software; absent when none.')),
  ),
  require_pushed_authorization_requests: v.pipe(
    v.boolean(),
    v.description('Whether its authorization requests must be pushed first (RFC 9126 section 6).'),
  ),
  dpop_bound_access_tokens: v.pipe(
    v.boolean(),
    v.description('Whether every token request of the client must carry a DPoP proof (RFC 9449).'),
  ),
};
