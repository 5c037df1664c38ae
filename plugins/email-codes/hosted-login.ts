import type { HostedLoginEmailCodes } from '../../core/capabilities/hosted-login-email-codes.ts';
import { hostedLoginLinksOf } from './link/hosted.ts';
import { outcomeOf } from './outcome.ts';
import type { createSecondFactorSender } from './second-factor/send.ts';
import type { createCompletion } from './sign-in/complete.ts';
import type { createSignInRequests } from './sign-in/request.ts';
import type { createVerification } from './sign-in/verify.ts';

/**
 * The hostedLoginEmailCodes capability: the same requests, checks, limits and events as
 * POST /authenticate/email, /authenticate/email/verify and /authenticate/mfa/email, without the token
 * (the hosted login finishes the sign-in).
 */
export function hostedLoginEmailCodesOf(deps: {
  requests: ReturnType<typeof createSignInRequests>;
  verification: ReturnType<typeof createVerification>;
  sendSecondFactor: ReturnType<typeof createSecondFactorSender>;
  completion: ReturnType<typeof createCompletion>;
  /** What the link methods need beyond these (link/hosted.ts). */
  links: Omit<Parameters<typeof hostedLoginLinksOf>[0], 'requests' | 'verification' | 'completion'>;
}): HostedLoginEmailCodes {
  return {
    ...hostedLoginLinksOf({ ...deps.links, ...deps }),
    async send(orgId, handle, rc) {
      try {
        if (!(await deps.completion.allows(orgId, 'otp_via_email')))
          return {
            ok: false,
            reason: 'refused',
            message: 'Signing in with a code by email is not offered here.',
          };
        const sent = await deps.requests.accept(orgId, handle, 'otp_via_email', rc);
        return { ok: true, challengeId: sent.challenge_id, expiresAt: sent.expires_at };
      } catch (error) {
        return outcomeOf(error);
      }
    },
    async check(orgId, challengeId, code, rc) {
      try {
        const checked = await deps.verification.check(orgId, { challenge_id: challengeId, code }, rc);
        // A code's challenge is never pending (that is a link's); refused as a wrong one.
        if (!checked.done) return { ok: false, reason: 'refused', message: 'challenge_id: takes no code' };
        return {
          ok: true,
          personId: checked.used.person.personId,
          authentication: checked.used.authentication,
        };
      } catch (error) {
        return outcomeOf(error);
      }
    },
    async sendSecondFactor(orgId, personId, rc) {
      try {
        const sent = await deps.sendSecondFactor.sendToPerson(orgId, personId, rc);
        return { ok: true, challengeId: sent.challenge_id, expiresAt: sent.expires_at };
      } catch (error) {
        return outcomeOf(error);
      }
    },
  };
}
