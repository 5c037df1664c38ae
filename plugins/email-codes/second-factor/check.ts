import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import { checkSecondFactor, type SecondFactorOutcome } from '../../../core/factors/second-factor.ts';
import { addressBucket } from '../../../core/http/client.ts';
import { isUuid } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { checkCode, closedReason } from '../challenges/code-check.ts';
import { challengeDigest, normaliseCode } from '../challenges/secrets.ts';
import type { ChallengeStore } from '../challenges/store.ts';
import { CODE_RULE } from '../schema.ts';

/**
 * `checkSecondFactor` for otp_via_email: `{challenge_id, code}` of POST /authenticate/mfa, checked
 * against a code POST /authenticate/mfa/email sent for the same person. The factors plugin reports the
 * outcome (events, status); this one limits its attempts per challenge, handle and address.
 */
export function secondFactorCheck(deps: {
  storage: Storage;
  clock: Clock;
  directory: PersonDirectory;
  store: ChallengeStore;
  maxAttempts: number;
  perHandle: TokenBuckets;
  perAddress: TokenBuckets;
}) {
  const { store } = deps;
  const invalid = (detail: string): SecondFactorOutcome => ({ ok: false, reason: 'invalid', detail });
  const limited = (retryAfter: number, what: string): SecondFactorOutcome => ({
    ok: false,
    reason: 'rate_limited',
    retryAfter,
    detail: `${what}; retry after ${retryAfter} s`,
  });

  return checkSecondFactor.attach({
    match: (i) => i.method === 'otp_via_email',
    async run({ orgId, personId, input, rc }): Promise<SecondFactorOutcome> {
      const challengeId = input.challenge_id;
      if (typeof challengeId !== 'string' || !isUuid(challengeId))
        return invalid(
          'challenge_id: must be the challenge_id POST /authenticate/mfa/email answered (a UUID)',
        );
      const code = typeof input.code === 'string' ? normaliseCode(input.code) : undefined;
      if (!code) return invalid(`code: ${CODE_RULE}`);
      if (rc.clientIp) {
        const take = await deps.perAddress.take(`${orgId}|${addressBucket(rc.clientIp)}`);
        if (!take.ok) return limited(take.retryAfterSeconds, 'too many codes tried from this address');
      }
      const challenge = await store.find(orgId, await challengeDigest(challengeId));
      if (challenge?.purpose !== 'second_factor' || challenge.personId !== personId)
        return invalid(
          'challenge_id: no second-factor code was sent with this challenge_id for this sign-in',
        );
      const take = await deps.perHandle.take(`${orgId}|${challenge.handle.type}|${challenge.handle.value}`);
      if (!take.ok) return limited(take.retryAfterSeconds, 'too many codes tried for this handle');
      const closed = closedReason(challenge, deps.clock.now());
      if (closed === 'exhausted')
        return limited(0, `challenge_id: void after ${deps.maxAttempts} wrong codes; ask for a new code`);
      if (closed)
        return invalid(`challenge_id: ${closed}; ask for a new code with POST /authenticate/mfa/email`);
      const checked = await checkCode(store, challenge, challengeId, code, deps.maxAttempts);
      if (!checked.ok && checked.closed) return invalid('challenge_id: used or void; ask for a new code');
      if (!checked.ok)
        return checked.exhausted
          ? limited(0, `challenge_id: void after ${deps.maxAttempts} wrong codes; ask for a new code`)
          : invalid(
              `code: does not match this challenge; ${deps.maxAttempts - checked.attempts} attempts left`,
            );
      const used = await deps.storage.transaction(async (tx) => {
        if (!(await store.consume(tx, challenge.digest, 'sent'))) return false;
        await deps.directory.markVerified(orgId, personId, challenge.handle, { tx });
        return true;
      });
      if (!used) return invalid('challenge_id: used already; ask for a new code');
      return {
        ok: true,
        authentication: {
          handle: challenge.handle,
          method: 'otp_via_email',
          timestamp: new Date(deps.clock.now()).toISOString(),
        },
      };
    },
  });
}
