import { importPKCS8, SignJWT } from 'jose';
import * as v from 'valibot';
import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { profileFromClaims, strictOptions } from './common.ts';
import { parseGoDuration } from './duration.ts';

/** Bounds of `secret_lifetime`, in seconds (Apple refuses client secrets valid for more than 6 months). */
export const APPLE_SECRET_LIFETIME = { min: 300, max: 15_777_000, default: 30 * 24 * 3600 } as const;

const tenCharacters = (what: string) =>
  v.pipe(
    v.string(`is required: the 10-character ${what}`),
    v.regex(/^[A-Z0-9]{10}$/i, `must be the 10-character ${what} (letters and digits)`),
  );

export const appleOptions = strictOptions(
  {
    private_key: v.pipe(
      v.string('is required: the ES256 private key (PKCS8 PEM) downloaded from the Apple developer account'),
      v.minLength(1, 'must not be empty'),
      v.maxLength(8192, 'must be at most 8192 characters'),
    ),
    team_id: tenCharacters('Team ID of the Apple developer account'),
    key_id: tenCharacters('Key ID of the private key'),
    secret_lifetime: v.optional(
      v.pipe(
        v.string('must be a duration string such as "24h" or "720h"'),
        v.check(
          (s) => parseGoDuration(s) !== undefined,
          'must be a duration string such as "1m", "24h" or "720h" (units ns, us, ms, s, m, h)',
        ),
        v.check((s) => {
          const seconds = parseGoDuration(s)!;
          return seconds >= APPLE_SECRET_LIFETIME.min && seconds <= APPLE_SECRET_LIFETIME.max;
        }, `must be from 300 seconds ("5m") to 15,777,000 seconds (about 6 months)`),
      ),
      '720h',
    ),
  },
  'apple',
);

export type AppleOptions = v.InferOutput<typeof appleOptions>;

const PRIVATE_KEY_RULE =
  'options.apple.private_key: must be an ES256 (P-256) private key in PKCS8 PEM format';

/** Imports the PKCS8 PEM as an ECDSA P-256 signing key; throws when it is anything else. */
const importKey = (pem: string) => importPKCS8(pem.trim(), 'ES256');

interface CachedSecret {
  jwt: string;
  /** Seconds: make a new one from then on. */
  renewAt: number;
}

// Keyed by everything the JWT is made of, so a changed key, team or lifetime makes a new one at once.
const cache = new Map<string, CachedSecret>();
const CACHE_LIMIT = 1024;

/**
 * Sign in with Apple: an OIDC issuer whose client secret is an ES256 JWT the service signs with the
 * team's private key (https://developer.apple.com/documentation/accountorganizationaldatasharing/creating-a-client-secret).
 */
export const apple = defineSsoProvider({
  id: 'apple',
  displayName: 'Apple',
  defaultScopes: ['openid', 'email', 'name'],
  alwaysScopes: ['openid', 'email', 'name'],
  options: appleOptions,
  secretOptions: ['private_key'],
  async checkOptions(options) {
    try {
      await importKey(options.private_key);
      return undefined;
    } catch {
      return PRIVATE_KEY_RULE;
    }
  },
  endpoints: { issuer: 'https://appleid.apple.com' },
  pkce: false,
  // Apple posts the callback when `name` or `email` is requested.
  authorizationParams: () => ({ response_mode: 'form_post' }),
  async clientSecret({ clientId, options, now }) {
    const key = [
      clientId,
      options.team_id,
      options.key_id,
      options.secret_lifetime,
      options.private_key,
    ].join('\n');
    const hit = cache.get(key);
    if (hit && now < hit.renewAt) return hit.jwt;
    const lifetime = Math.floor(parseGoDuration(options.secret_lifetime) ?? APPLE_SECRET_LIFETIME.default);
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: options.key_id })
      .setIssuer(options.team_id)
      .setIssuedAt(now)
      .setExpirationTime(now + lifetime)
      .setAudience('https://appleid.apple.com')
      .setSubject(clientId)
      .sign(await importKey(options.private_key));
    // Renewed a little before it expires (a tenth of its life, at most an hour), so no token request
    // carries a secret that expires on the way.
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(key, { jwt, renewAt: now + lifetime - Math.min(3600, Math.floor(lifetime / 10)) });
    return jwt;
  },
  profile: async ({ idTokenClaims }) => profileFromClaims(idTokenClaims),
});
