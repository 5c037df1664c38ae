import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { SignInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import { checkSecondFactor, type SecondFactorOutcome } from '../../../core/factors/second-factor.ts';
import { addressBucket } from '../../../core/http/client.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { parseOrThrow } from '../../../core/http/validation.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import type { Assertions } from '../ceremony/assertion.ts';
import { PasskeyErrors } from '../errors.ts';
import { SecondFactorInput } from '../schema.ts';
import type { PasskeyStore } from '../store/credentials.ts';
import { authenticationOf, limitAddress } from './sign-in.ts';

export interface SecondFactorDeps {
  directory: PersonDirectory;
  assertions: Assertions;
  passkeys: PasskeyStore;
  completion: () => SignInCompletion | undefined;
  clock: Clock;
  perAddress: TokenBuckets;
}

/**
 * Passkeys as the second step: options for the person of a pending mfa_token (its own passkeys
 * listed), and the check POST /authenticate/mfa runs for `method: webauthn`. The assertion must come
 * from a passkey of that person, answer a challenge made for that person, and is used once.
 */
export function createSecondFactor(deps: SecondFactorDeps) {
  const { assertions, passkeys } = deps;

  async function options(orgId: string, mfaToken: string, rc: RequestContext) {
    await limitAddress(deps.perAddress, orgId, rc);
    const pending = await deps.completion()?.pending(orgId, mfaToken);
    if (!pending)
      throw PasskeyErrors.MFA_TOKEN_REFUSED('mfa_token: names no pending second step of this organization');
    if (!pending.methods.includes('webauthn'))
      throw PasskeyErrors.MFA_TOKEN_REFUSED(
        'mfa_token: webauthn is not a second factor this sign-in may use',
      );
    const own = await passkeys.list(orgId, pending.personId);
    if (own.length === 0)
      throw PasskeyErrors.NO_PASSKEY('the person has no passkey to complete the second step with');
    return assertions.options(orgId, 'second_factor', {
      personId: pending.personId,
      forHandle: true,
      allow: own,
      // The first factor identified the person already: possession is what this step adds.
      userVerification: 'discouraged',
    });
  }

  async function check(i: {
    orgId: string;
    personId: string;
    input: Readonly<Record<string, unknown>>;
    rc: RequestContext;
  }): Promise<SecondFactorOutcome> {
    const body = parseOrThrow(SecondFactorInput, i.input, 'body');
    if (i.rc.clientIp) {
      const take = await deps.perAddress.take(`${i.orgId}|${addressBucket(i.rc.clientIp)}`);
      if (!take.ok)
        return {
          ok: false,
          reason: 'rate_limited',
          detail: 'too many passkey attempts from this address',
          retryAfter: take.retryAfterSeconds,
        };
    }
    const own = await passkeys.list(i.orgId, i.personId);
    if (own.length === 0) return { ok: false, reason: 'not_enrolled', detail: 'the person has no passkey' };
    const checked = await assertions.verify(i.orgId, 'second_factor', body.challenge_id, body.response, {
      requireUserVerification: false,
      personId: i.personId,
    });
    if (!checked.ok) return { ok: false, reason: 'invalid', detail: `${checked.reason}: ${checked.detail}` };
    const person = await deps.directory.get(i.orgId, i.personId);
    if (!person) return { ok: false, reason: 'invalid', detail: 'the person is gone' };
    return { ok: true, authentication: authenticationOf(person, checked.passkey, deps.clock.now()) };
  }

  return {
    options,
    check,
    attachment: checkSecondFactor.attach({ match: (i) => i.method === 'webauthn', run: check }),
  };
}
