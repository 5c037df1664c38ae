import type { Rate } from '../../../core/contract/settings.ts';
import { addressBucket } from '../../../core/http/client.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { createTokenBuckets } from '../../../core/rate-limit/index.ts';

/** Why an attempt is refused before its code is looked at, and when to try again. */
export interface Refusal {
  retryAfter: number;
  detail: string;
}

/**
 * The attempt limits of codes: per client address (when known) first, so a client spraying many persons
 * is stopped without spending their budgets, then per person (each has one confirmed authenticator).
 */
export function createAttemptLimits(deps: {
  clock: Clock;
  storage: Storage;
  perPerson: Rate;
  perAddress: Rate;
}) {
  const buckets = (name: string, rate: Rate) =>
    createTokenBuckets({
      name: `totp-${name}`,
      clock: deps.clock,
      storage: deps.storage,
      perMinute: rate.perMinute,
      capacity: rate.burst,
    });
  const perAddress = buckets('address', deps.perAddress);
  const perPerson = buckets('person', deps.perPerson);

  /** Takes one attempt, or answers why not. */
  return async function take(
    orgId: string,
    personId: string,
    clientIp: string | undefined,
  ): Promise<Refusal | undefined> {
    if (clientIp) {
      const byAddress = await perAddress.take(`${orgId}|${addressBucket(clientIp)}`);
      if (!byAddress.ok)
        return {
          retryAfter: byAddress.retryAfterSeconds,
          detail: 'too many code attempts from this address',
        };
    }
    const byPerson = await perPerson.take(`${orgId}|${personId}`);
    if (!byPerson.ok)
      return { retryAfter: byPerson.retryAfterSeconds, detail: 'too many code attempts for this person' };
    return undefined;
  };
}

export type AttemptLimits = ReturnType<typeof createAttemptLimits>;
