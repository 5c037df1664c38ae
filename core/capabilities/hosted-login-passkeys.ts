import { defineCapability } from '../contract/capabilities.ts';
import type { RequestContext } from '../http/sign-in-context.ts';
import type { TokenAuthentication } from '../tokens/before-token-issued.ts';

/** A WebAuthn ceremony's options for the browser (the JSON form), and the challenge its answer names. */
export interface PasskeyCeremony {
  challengeId: string;
  /** PublicKeyCredentialRequestOptionsJSON or PublicKeyCredentialCreationOptionsJSON. */
  options: object;
}

/** Why a passkey's answer did not count: the message the page shows. */
export interface PasskeyRefusal {
  ok: false;
  message: string;
}

/**
 * Passkeys in the hosted login (oauth2-authorize calls it, the passkeys plugin provides it): sign-in with
 * a discoverable passkey, registration for a person who signed in, and the options of the second step
 * (whose answer the `checkSecondFactor` hook checks, with `{ challenge_id, response }`). No token is
 * issued here: the hosted login continues the sign-in as it does after a password.
 */
export interface HostedLoginPasskeys {
  /** Whether the organization's policy allows passkeys as a first factor now. */
  allowsFirstFactor(orgId: string): Promise<boolean>;
  /**
   * Sign-in options: discoverable credentials, no handle (a page's: the authorization endpoint's rate
   * limit stands in for the API's per-address one).
   */
  signInOptions(orgId: string): Promise<PasskeyCeremony>;
  /**
   * Verifies a sign-in assertion (`response`: the browser's AuthenticationResponseJSON) against its
   * challenge; the person (active) and the authentication the ID token stands for, or why not
   * (AuthenticationFailed_v1 published then).
   */
  verifySignIn(
    orgId: string,
    challengeId: string,
    response: unknown,
    rc: RequestContext,
  ): Promise<{ ok: true; personId: string; authentication: TokenAuthentication } | PasskeyRefusal>;
  /**
   * Whether the hosted login offers the person "Add a passkey?" after a sign-in by another factor: with
   * PASSKEY_HOSTED_LOGIN_OFFER=policy (the default), when the organization's policy allows passkeys as
   * a first factor, the person has none and has not said "Not now" lately.
   */
  offerWanted(orgId: string, personId: string): Promise<boolean>;
  /** The person answered the offer "Not now": it is not made again for a while. */
  declineOffer(orgId: string, personId: string): Promise<void>;
  /** Whether the person has a passkey. */
  hasPasskey(orgId: string, personId: string): Promise<boolean>;
  /** Registration options for the person (undefined: no such person). */
  registrationOptions(orgId: string, personId: string): Promise<PasskeyCeremony | undefined>;
  /** Verifies and stores the person's new passkey (`response`: the RegistrationResponseJSON). */
  register(
    orgId: string,
    personId: string,
    challengeId: string,
    response: unknown,
  ): Promise<{ ok: true } | PasskeyRefusal>;
  /** Second-step options listing the person's passkeys; undefined when the person has none. */
  secondStepOptions(orgId: string, personId: string): Promise<PasskeyCeremony | undefined>;
}

/** Declared for the hosted login (oauth2-authorize), which calls it; provided by the passkeys plugin. */
export const hostedLoginPasskeys = defineCapability<HostedLoginPasskeys>('hostedLoginPasskeys');
