import * as v from 'valibot';
import type { HostedLoginPasskeys } from '../../../core/capabilities/hosted-login-passkeys.ts';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { Assertions } from '../ceremony/assertion.ts';
import type { Registration } from '../ceremony/registration.ts';
import { RegisterBody, SignInBody } from '../schema.ts';
import type { PasskeyStore } from '../store/credentials.ts';
import type { OfferDeclines } from '../store/offer-declines.ts';
import type { PasskeySignIn } from './sign-in.ts';

/** What the page says for an assertion that signs nobody in (the reason is in AuthenticationFailed_v1). */
const NOT_SIGNED_IN = 'This passkey did not sign you in. Try again, or sign in another way.';

/**
 * The `hostedLoginPasskeys` capability: the hosted login's passkey button, its offer to add a passkey
 * and its second step, on the plugin's own ceremonies (the same challenges, checks and events as the
 * API's routes; no token issued here).
 */
export function hostedLoginPasskeysOf(deps: {
  directory: PersonDirectory;
  signIn: PasskeySignIn;
  assertions: Assertions;
  registration: Registration;
  passkeys: PasskeyStore;
  userVerification: 'required' | 'preferred';
  /** PASSKEY_HOSTED_LOGIN_OFFER: `policy` offers as the policy allows, `off` never. */
  offer: 'policy' | 'off';
  declines: OfferDeclines;
}): HostedLoginPasskeys {
  const ceremony = (o: { challenge_id: string; options: object }) => ({
    challengeId: o.challenge_id,
    options: o.options,
  });
  return {
    allowsFirstFactor: (orgId) => deps.signIn.allowsFirstFactor(orgId),

    async offerWanted(orgId, personId) {
      if (deps.offer === 'off' || !(await deps.signIn.allowsFirstFactor(orgId))) return false;
      if ((await deps.passkeys.list(orgId, personId)).length > 0) return false;
      return !(await deps.declines.recent(orgId, personId));
    },

    declineOffer: (orgId, personId) => deps.declines.record(orgId, personId),

    async signInOptions(orgId) {
      return ceremony(
        await deps.assertions.options(orgId, 'sign_in', { userVerification: deps.userVerification }),
      );
    },

    async verifySignIn(orgId, challengeId, response, rc) {
      const body = v.safeParse(SignInBody, { challenge_id: challengeId, response });
      if (!body.success) return { ok: false, message: NOT_SIGNED_IN };
      const checked = await deps.signIn.firstFactor(orgId, body.output, rc);
      if (!checked.ok)
        return {
          ok: false,
          message:
            checked.reason === 'challenge_refused'
              ? 'This page has waited too long for the passkey, or was answered already. Try again.'
              : NOT_SIGNED_IN,
        };
      return { ok: true, personId: checked.person.personId, authentication: checked.authentication };
    },

    async hasPasskey(orgId, personId) {
      return (await deps.passkeys.list(orgId, personId)).length > 0;
    },

    async registrationOptions(orgId, personId) {
      const person = await deps.directory.get(orgId, personId);
      if (!person) return undefined;
      return ceremony(await deps.registration.options(person));
    },

    async register(orgId, personId, challengeId, response) {
      const person = await deps.directory.get(orgId, personId);
      const body = v.safeParse(RegisterBody, { challenge_id: challengeId, response });
      if (!person || !body.success) return { ok: false, message: 'The passkey could not be added.' };
      try {
        await deps.registration.register(person, body.output);
        return { ok: true };
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        return { ok: false, message: `The passkey could not be added: ${error.message}` };
      }
    },

    async secondStepOptions(orgId, personId) {
      const own = await deps.passkeys.list(orgId, personId);
      if (own.length === 0) return undefined;
      return ceremony(
        await deps.assertions.options(orgId, 'second_factor', {
          personId,
          forHandle: true,
          allow: own,
          // As the API's second step: the first factor identified the person already.
          userVerification: 'discouraged',
        }),
      );
    },
  };
}
