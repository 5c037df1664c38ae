import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  type PublicKeyCredentialRequestOptionsJSON,
  verifyAuthenticationResponse,
} from '@simplewebauthn/server';
import type * as v from 'valibot';
import { fromBase64url } from '../../../core/ids.ts';
import type { AuthenticationResponse } from '../schema.ts';
import type { ChallengePurpose, ChallengeStore } from '../store/challenges.ts';
import type { Passkey, PasskeyStore } from '../store/credentials.ts';
import type { RelyingParties } from './relying-party.ts';
import { userHandleText } from './user-handle.ts';

export interface AssertionDeps {
  challenges: ChallengeStore;
  passkeys: PasskeyStore;
  relyingParties: RelyingParties;
  ttlMs: number;
}

/** Why an assertion did not count, as AuthenticationFailed_v1's `failure_reason` says it. */
export type AssertionFailure =
  | 'challenge_refused'
  | 'unknown_credential'
  | 'wrong_person'
  | 'invalid_assertion'
  | 'replayed_counter';

export type AssertionOutcome =
  | { ok: true; passkey: Passkey }
  | { ok: false; reason: AssertionFailure; detail: string; passkey?: Passkey };

/**
 * The assertion ceremony the sign-in and the second step share: options for
 * `navigator.credentials.get` with a fresh challenge, then an answer checked against the challenge
 * (taken first: single use), the organization's passkey, its relying party and origins, the
 * signature and the sign counter.
 */
export function createAssertions(deps: AssertionDeps) {
  const { challenges, passkeys, relyingParties } = deps;

  async function options(
    orgId: string,
    purpose: Exclude<ChallengePurpose, 'registration'>,
    o: {
      personId?: string | null;
      forHandle?: boolean;
      allow?: Passkey[];
      userVerification: 'required' | 'preferred' | 'discouraged';
    },
  ): Promise<{ challenge_id: string; options: PublicKeyCredentialRequestOptionsJSON }> {
    const rp = await relyingParties.of(orgId);
    const opened = await challenges.open(orgId, purpose, {
      personId: o.personId ?? null,
      forHandle: o.forHandle ?? false,
    });
    const made = await generateAuthenticationOptions({
      rpID: rp.rpId,
      challenge: fromBase64url(opened.challenge),
      timeout: deps.ttlMs,
      userVerification: o.userVerification,
      ...(o.allow
        ? { allowCredentials: o.allow.map((p) => ({ id: p.webauthnId, transports: p.transports })) }
        : {}),
    });
    return { challenge_id: opened.challengeId, options: made };
  }

  async function verify(
    orgId: string,
    purpose: Exclude<ChallengePurpose, 'registration'>,
    challengeId: string,
    r: v.InferOutput<typeof AuthenticationResponse>,
    o: { requireUserVerification: boolean; personId?: string },
  ): Promise<AssertionOutcome> {
    const taken = await challenges.take(orgId, purpose, challengeId);
    if (!taken.ok)
      return {
        ok: false,
        reason: 'challenge_refused',
        detail:
          taken.reason === 'expired'
            ? 'the challenge had expired'
            : 'the challenge_id names no open challenge of this organization (unknown, or answered already)',
      };
    const passkey = await passkeys.byWebauthnId(orgId, r.id);
    if (!passkey)
      return {
        ok: false,
        reason: 'unknown_credential',
        detail: 'no passkey of this organization has this ID',
      };
    // The person the challenge was made for (a handle's, an mfa_token's) and the caller's, when bound.
    const challengePerson = taken.challenge.forHandle ? taken.challenge.personId : passkey.personId;
    if (challengePerson !== passkey.personId || (o.personId !== undefined && o.personId !== passkey.personId))
      return {
        ok: false,
        reason: 'wrong_person',
        detail: 'the passkey is not one of the person this sign-in is for',
        passkey,
      };
    if (r.response.userHandle !== undefined && r.response.userHandle !== userHandleText(passkey.personId))
      return {
        ok: false,
        reason: 'wrong_person',
        detail: "the assertion's user handle is not the passkey's person",
        passkey,
      };
    const rp = await relyingParties.of(orgId);
    const response: AuthenticationResponseJSON = {
      id: r.id,
      rawId: r.rawId,
      type: r.type,
      response: {
        clientDataJSON: r.response.clientDataJSON,
        authenticatorData: r.response.authenticatorData,
        signature: r.response.signature,
        ...(r.response.userHandle !== undefined ? { userHandle: r.response.userHandle } : {}),
      },
      clientExtensionResults: {},
      ...(r.authenticatorAttachment ? { authenticatorAttachment: r.authenticatorAttachment } : {}),
    };
    let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
    try {
      verified = await verifyAuthenticationResponse({
        response,
        expectedChallenge: taken.challenge.challenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.rpId,
        credential: {
          id: passkey.webauthnId,
          publicKey: fromBase64url(passkey.publicKey),
          counter: passkey.counter,
          transports: passkey.transports,
        },
        requireUserVerification: o.requireUserVerification,
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // simplewebauthn says so when the counter went back: a cloned authenticator, or a replay.
      const replay = /counter/i.test(message);
      return {
        ok: false,
        reason: replay ? 'replayed_counter' : 'invalid_assertion',
        detail: message,
        passkey,
      };
    }
    if (!verified.verified)
      return { ok: false, reason: 'invalid_assertion', detail: 'the signature did not verify', passkey };
    const info = verified.authenticationInfo;
    const recorded = await passkeys.recordUse(passkey, {
      counter: info.newCounter,
      backedUp: info.credentialBackedUp,
    });
    if (!recorded)
      return {
        ok: false,
        reason: 'replayed_counter',
        detail: 'another use of this passkey with the same sign counter was recorded first',
        passkey,
      };
    return { ok: true, passkey };
  }

  return { options, verify };
}

export type Assertions = ReturnType<typeof createAssertions>;
