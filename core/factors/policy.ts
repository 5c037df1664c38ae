import { defineCapability } from '../contract/capabilities.ts';

/** First factors (the reference's FactorMethod names): each signs a person in on its own. */
export const FIRST_FACTORS = ['password', 'webauthn', 'otp_via_email', 'email_link', 'oidc'] as const;
export type FirstFactor = (typeof FIRST_FACTORS)[number];

/** Second factors: each completes a sign-in a first factor began. */
export const SECOND_FACTORS = ['totp', 'webauthn', 'otp_via_email'] as const;
export type SecondFactor = (typeof SECOND_FACTORS)[number];

/**
 * An organization's authentication policy (PUT /organizations/authentication-policy): which first
 * factors sign people in, whether a second factor is off, optional (asked of persons who enrolled one)
 * or required, which second factors count, and the WebAuthn relying party its passkeys belong to.
 */
export interface AuthenticationPolicy {
  firstFactors: FirstFactor[];
  secondFactor: 'off' | 'optional' | 'required';
  secondFactors: SecondFactor[];
  webauthn: {
    /** The relying party ID: the public base URL's host unless set. */
    rpId: string;
    rpName: string;
    /** The origins whose assertions count: the public base URL's origin unless set. */
    origins: string[];
  };
}

/** The policy in force: read at each sign-in (a change takes effect at once on every replica). */
export interface AuthenticationPolicies {
  get(orgId: string): Promise<AuthenticationPolicy>;
}

/** Provided by the factors plugin; without it every first factor is allowed and no second one asked. */
export const authenticationPolicies = defineCapability<AuthenticationPolicies>('authenticationPolicies');

/** The policy of an organization that never set one: every first factor, no second factor. */
export function defaultPolicy(publicBaseUrl: string): AuthenticationPolicy {
  const base = new URL(publicBaseUrl);
  return {
    firstFactors: [...FIRST_FACTORS],
    secondFactor: 'off',
    secondFactors: [...SECOND_FACTORS],
    webauthn: { rpId: base.hostname, rpName: base.hostname, origins: [base.origin] },
  };
}
