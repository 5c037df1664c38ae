import { defineCapability } from '../contract/capabilities.ts';
import type { SecondFactor } from '../factors/policy.ts';
import type { RequestContext } from '../http/sign-in-context.ts';
import type { TokenAuthentication } from '../tokens/before-token-issued.ts';
import type { PersonRecord } from './person-directory.ts';

/** What a first factor's sign-in answers: the token, or the second step the policy asks for. */
export type CompletedSignIn =
  | { kind: 'token'; token: string; person_id: string }
  | {
      kind: 'mfa_required';
      person_id: string;
      /** Short-lived and single use: names the first factor's success for POST /authenticate/mfa. */
      mfa_token: string;
      /** The second factors the person may complete it with. */
      methods: SecondFactor[];
    };

/**
 * The end of a sign-in through the API (`/authenticate/*`): once a first factor succeeded, the policy
 * decides whether a second is needed (`mfa_required` with an `mfa_token`) or the token is issued
 * (beforeTokenIssued, TokenMinted_v1, AuthenticationSucceeded_v1 with every factor). A first factor that
 * is not allowed by the policy is refused before it is checked (`allows`).
 */
export interface SignInCompletion {
  /** Whether the organization's policy allows this first factor now. */
  allows(orgId: string, method: string): Promise<boolean>;
  /**
   * The second factors this person must (or, under `optional`, may) complete; [] when none is asked.
   * Under `required` never []: a person with none enrolled gets every factor the policy counts, and a
   * caller that asks for one of them refuses the sign-in when the check answers `not_enrolled`.
   */
  secondStep(orgId: string, personId: string): Promise<SecondFactor[]>;
  /** After a first factor succeeded for the person. */
  afterFirstFactor(o: {
    orgId: string;
    person: PersonRecord;
    authentication: TokenAuthentication;
    rc: RequestContext;
    prevAnonymousPersonId?: string;
  }): Promise<CompletedSignIn>;
  /**
   * The person and the second factors of an open mfa_token of this organization (not used, not
   * expired), or undefined: for factor plugins whose second step needs the person before the check (the
   * passkey options of POST /authenticate/mfa/webauthn-options, the code POST /authenticate/mfa/email
   * sends). It does not use the token up.
   */
  pending(
    orgId: string,
    mfaToken: string,
  ): Promise<{ personId: string; methods: SecondFactor[] } | undefined>;
}

/** Provided by the factors plugin. */
export const signInCompletion = defineCapability<SignInCompletion>('signInCompletion');
