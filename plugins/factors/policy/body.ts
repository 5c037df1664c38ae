import * as v from 'valibot';
import {
  type AuthenticationPolicy,
  FIRST_FACTORS,
  type FirstFactor,
  SECOND_FACTORS,
  type SecondFactor,
} from '../../../core/factors/policy.ts';
import { exactObject } from '../../../core/http/validation.ts';
import { isIpLiteralHost, isLocalhostName } from '../../../core/net/address.ts';
import { FactorsErrors } from '../errors.ts';
import type { StoredPolicy } from '../schema.ts';

const SECOND_FACTOR_MODES = ['off', 'optional', 'required'] as const;
const MAX_ORIGINS = 10;

/** A WebAuthn relying party ID: a lower-case domain name (or localhost), no port, no IP address. */
const isRpId = (s: string) =>
  s.length <= 253 &&
  !isIpLiteralHost(s) &&
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(s);

/** An origin passkeys may be used from: https, or http on localhost (development). */
function isPasskeyOrigin(s: string): boolean {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return false;
  }
  if (url.origin !== s) return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLocalhostName(url.hostname));
}

const ORIGIN_RULE =
  'must be an origin (scheme, host and port only, no path or trailing slash): https, or http on localhost';

export const PolicyBody = exactObject(
  {
    first_factors: v.pipe(
      v.array(
        v.picklist(FIRST_FACTORS, `must be one of ${FIRST_FACTORS.join(', ')}`),
        'must be an array of first factors',
      ),
      v.minLength(1, 'must name at least one first factor: with none, nobody could sign in'),
      v.check((a) => new Set(a).size === a.length, 'must not name a factor twice'),
      v.description(`The factors a sign-in may begin with: ${FIRST_FACTORS.join(', ')}.`),
    ),
    second_factor: v.pipe(
      v.picklist(SECOND_FACTOR_MODES, `must be one of ${SECOND_FACTOR_MODES.join(', ')}`),
      v.description(
        'off: no second step; optional: asked of persons who enrolled a second factor; required: asked of everyone (a person without one cannot sign in).',
      ),
    ),
    second_factors: v.optional(
      v.pipe(
        v.array(
          v.picklist(SECOND_FACTORS, `must be one of ${SECOND_FACTORS.join(', ')}`),
          'must be an array of second factors',
        ),
        v.check((a) => new Set(a).size === a.length, 'must not name a factor twice'),
        v.description(
          `The factors that count as the second step. Default: all (${SECOND_FACTORS.join(', ')}).`,
        ),
      ),
    ),
    webauthn: v.optional(
      v.nullable(
        exactObject(
          {
            rp_id: v.pipe(
              v.string('must be a string'),
              v.check(isRpId, 'must be a lower-case domain name without a port (not an IP address)'),
              v.description('The relying party ID passkeys are bound to.'),
            ),
            rp_name: v.pipe(
              v.string('must be a string'),
              v.minLength(1, 'must not be empty'),
              v.maxLength(100, 'must be at most 100 characters'),
            ),
            origins: v.pipe(
              v.array(v.pipe(v.string('must be a string'), v.check(isPasskeyOrigin, ORIGIN_RULE))),
              v.minLength(1, 'must name at least one origin'),
              v.maxLength(MAX_ORIGINS, `must name at most ${MAX_ORIGINS} origins`),
            ),
          },
          'member',
        ),
      ),
    ),
  },
  'member',
);

export type PolicyInput = v.InferOutput<typeof PolicyBody>;

/** The host of an origin checked by isPasskeyOrigin. */
const hostOf = (origin: string) => new URL(origin).hostname;

/**
 * The rules between members, which the schema cannot say alone: a second step needs a factor to take,
 * and every origin must be the relying party's host or under it (WebAuthn's rule: the browser refuses
 * otherwise). Throws a 400 naming the member.
 */
export function storedPolicyOf(body: PolicyInput): StoredPolicy {
  const secondFactors: SecondFactor[] = body.second_factors ?? [...SECOND_FACTORS];
  if (body.second_factor !== 'off' && secondFactors.length === 0)
    throw FactorsErrors.INVALID_BODY(
      `body.second_factors: must name at least one second factor when second_factor is ${body.second_factor}`,
    );
  const w = body.webauthn ?? undefined;
  if (w)
    w.origins.forEach((origin, i) => {
      const host = hostOf(origin);
      if (host !== w.rp_id && !host.endsWith(`.${w.rp_id}`))
        throw FactorsErrors.INVALID_BODY(
          `body.webauthn.origins[${i}]: the host ${host} must be rp_id (${w.rp_id}) or a name under it`,
        );
    });
  return {
    firstFactors: body.first_factors as FirstFactor[],
    secondFactor: body.second_factor,
    secondFactors,
    ...(w ? { webauthn: { rpId: w.rp_id, rpName: w.rp_name, origins: [...w.origins] } } : {}),
  };
}

/** The policy as the API says it. */
export const policyAnswer = (p: AuthenticationPolicy) => ({
  first_factors: p.firstFactors,
  second_factor: p.secondFactor,
  second_factors: p.secondFactors,
  webauthn: { rp_id: p.webauthn.rpId, rp_name: p.webauthn.rpName, origins: p.webauthn.origins },
});

export const PolicyAnswer = v.object({
  first_factors: v.array(v.picklist(FIRST_FACTORS)),
  second_factor: v.picklist(SECOND_FACTOR_MODES),
  second_factors: v.array(v.picklist(SECOND_FACTORS)),
  webauthn: v.object({ rp_id: v.string(), rp_name: v.string(), origins: v.array(v.string()) }),
});
