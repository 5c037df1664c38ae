import {
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type * as v from 'valibot';
import type { PersonRecord } from '../../../core/capabilities/person-directory.ts';
import { base64url, fromBase64url } from '../../../core/ids.ts';
import { PasskeyErrors } from '../errors.ts';
import type { RegisterBody } from '../schema.ts';
import { type ChallengeStore, challengeRefusalText } from '../store/challenges.ts';
import type { Passkey, PasskeyStore } from '../store/credentials.ts';
import type { RelyingParties } from './relying-party.ts';
import { userHandleOf } from './user-handle.ts';

/**
 * EdDSA, ES256 and RS256 (COSE -8, -7, -257): what every authenticator offers and every runtime the
 * service runs on (Bun, Node, Deno) verifies. The library's default adds ML-DSA-44 where the runtime
 * has it, which would leave a passkey made on one runtime unverifiable after a move to another.
 */
export const SUPPORTED_ALGORITHMS = [-8, -7, -257];

export interface RegistrationDeps {
  challenges: ChallengeStore;
  passkeys: PasskeyStore;
  relyingParties: RelyingParties;
  ttlMs: number;
}

/** The name a passkey gets when the registration names none. */
export const DEFAULT_NAME = 'Passkey';

/**
 * Passkey registration, on behalf of the organization (API key): options for
 * `navigator.credentials.create` bound to the person, then the verified response stored.
 */
export function createRegistration(deps: RegistrationDeps) {
  const { challenges, passkeys, relyingParties } = deps;

  async function options(
    person: PersonRecord,
  ): Promise<{ challenge_id: string; options: PublicKeyCredentialCreationOptionsJSON }> {
    const rp = await relyingParties.of(person.orgId);
    const existing = await passkeys.list(person.orgId, person.personId);
    const opened = await challenges.open(person.orgId, 'registration', { personId: person.personId });
    const label = person.handles[0]?.value ?? person.personId;
    const made = await generateRegistrationOptions({
      rpName: rp.rpName,
      rpID: rp.rpId,
      userName: label,
      userDisplayName: label,
      userID: userHandleOf(person.personId),
      challenge: fromBase64url(opened.challenge),
      timeout: deps.ttlMs,
      attestationType: 'none',
      supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
      // A passkey: discoverable, so a sign-in needs no handle; the same authenticator is not added twice.
      excludeCredentials: existing.map((p) => ({ id: p.webauthnId, transports: p.transports })),
      authenticatorSelection: {
        residentKey: 'required',
        requireResidentKey: true,
        userVerification: 'preferred',
      },
    });
    return { challenge_id: opened.challengeId, options: made };
  }

  async function register(person: PersonRecord, body: v.InferOutput<typeof RegisterBody>): Promise<Passkey> {
    const taken = await challenges.take(person.orgId, 'registration', body.challenge_id);
    if (!taken.ok) throw PasskeyErrors.CHALLENGE_REFUSED(challengeRefusalText(taken.reason, 'registration'));
    if (taken.challenge.personId !== person.personId)
      throw PasskeyErrors.CHALLENGE_REFUSED(
        `challenge_id: the registration challenge was made for another person than ${person.personId}`,
      );
    const rp = await relyingParties.of(person.orgId);
    const r = body.response;
    const response: RegistrationResponseJSON = {
      id: r.id,
      rawId: r.rawId,
      type: r.type,
      response: {
        clientDataJSON: r.response.clientDataJSON,
        attestationObject: r.response.attestationObject,
        ...(r.response.transports ? { transports: r.response.transports } : {}),
      },
      clientExtensionResults: {},
      ...(r.authenticatorAttachment ? { authenticatorAttachment: r.authenticatorAttachment } : {}),
    };
    let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verified = await verifyRegistrationResponse({
        response,
        expectedChallenge: taken.challenge.challenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.rpId,
        supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
        // Asked as `preferred`: an authenticator that cannot verify its user still registers.
        requireUserVerification: false,
      });
    } catch (error) {
      throw PasskeyErrors.REGISTRATION_REFUSED(
        `response: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (!verified.verified)
      throw PasskeyErrors.REGISTRATION_REFUSED('response: the registration did not verify');
    const info = verified.registrationInfo;
    const added = await passkeys.add({
      orgId: person.orgId,
      personId: person.personId,
      webauthnId: info.credential.id,
      publicKey: base64url(info.credential.publicKey),
      counter: info.credential.counter,
      transports: info.credential.transports ?? r.response.transports ?? [],
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backedUp: info.credentialBackedUp,
      aaguid: info.aaguid,
      name: body.name ?? DEFAULT_NAME,
    });
    if (!added)
      throw PasskeyErrors.CREDENTIAL_EXISTS(
        'response.id: this authenticator credential is registered already in this organization',
      );
    return added;
  }

  return { options, register };
}

export type Registration = ReturnType<typeof createRegistration>;
