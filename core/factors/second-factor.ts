import { defineHook } from '../contract/hooks.ts';
import type { RequestContext } from '../http/sign-in-context.ts';
import type { TokenAuthentication } from '../tokens/before-token-issued.ts';
import type { SecondFactor } from './policy.ts';

/** What a second factor's check answers. */
export type SecondFactorOutcome =
  | { ok: true; authentication: TokenAuthentication }
  | { ok: false; reason: 'invalid' | 'not_enrolled' | 'rate_limited'; detail: string; retryAfter?: number };

/**
 * Checks the second step of a sign-in (POST /authenticate/mfa, the hosted login's second page): the
 * plugin of `method` checks `input` (its own body members: `code`, or `challenge_id` and `response`) for
 * the person and answers; the others do not match. Each plugin limits its own attempts.
 *
 * @example attach: [checkSecondFactor.attach({ match: (i) => i.method === 'totp', run: (i) => totp.check(i) })]
 */
export const checkSecondFactor = defineHook<
  {
    orgId: string;
    personId: string;
    method: SecondFactor;
    input: Readonly<Record<string, unknown>>;
    rc: RequestContext;
  },
  SecondFactorOutcome
>('checkSecondFactor');
