import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { Hooks } from '../../../core/contract/hooks.ts';
import type { SecondFactor } from '../../../core/factors/policy.ts';
import { checkSecondFactor } from '../../../core/factors/second-factor.ts';
import { addressBucket } from '../../../core/http/client.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { FactorsErrors } from '../errors.ts';
import type { PolicyStore } from '../policy/store.ts';
import type { Completion } from './completion.ts';
import type { SignInEvents } from './events.ts';
import type { MfaTokens } from './tokens.ts';

export interface SecondStepDeps {
  policies: PolicyStore;
  directory: PersonDirectory;
  hooks: Hooks;
  tokens: MfaTokens;
  events: SignInEvents;
  issue: Completion['issue'];
  perToken: TokenBuckets;
  perAddress: TokenBuckets;
}

export interface SecondStepRequest {
  mfaToken: string;
  method: SecondFactor;
  /** The factor's own members (`code`, or `challenge_id` and `response`). */
  input: Readonly<Record<string, unknown>>;
}

const tooMany = (retryAfter: number, what: string) =>
  FactorsErrors.TOO_MANY_ATTEMPTS.with({ headers: { 'retry-after': String(retryAfter) } })(
    `too many second-factor attempts ${what}; retry after ${retryAfter} s`,
  );

/**
 * POST /authenticate/mfa: the second factor's plugin checks its input for the mfa_token's person; on
 * success the token is used up and the identity token issued with both factors. Every failure is
 * reported (AuthenticationFailed_v1 with the second factor's method) and counted against the token.
 */
export function createSecondStep(deps: SecondStepDeps) {
  const { tokens, events } = deps;

  return async function complete(orgId: string, req: SecondStepRequest, rc: RequestContext) {
    const { method } = req;
    // The address first: a client spraying tokens is stopped before any is looked up.
    if (rc.clientIp) {
      const take = await deps.perAddress.take(`${orgId}|${addressBucket(rc.clientIp)}`);
      if (!take.ok) {
        await events.failed(orgId, rc, {
          method,
          reason: 'too_many_attempts',
          detail: 'too many second-factor attempts from this client address',
        });
        throw tooMany(take.retryAfterSeconds, 'from this address');
      }
    }
    const step = await tokens.find(orgId, req.mfaToken);
    if (!step) {
      await events.failed(orgId, rc, {
        method,
        reason: 'invalid_mfa_token',
        detail: 'the mfa_token is unknown, expired or already used',
      });
      throw FactorsErrors.MFA_TOKEN_REFUSED();
    }
    const take = await deps.perToken.take(step.digest);
    if (!take.ok) {
      await events.failed(orgId, rc, {
        method,
        reason: 'too_many_attempts',
        detail: 'too many second-factor attempts for this mfa_token',
      });
      throw tooMany(take.retryAfterSeconds, 'for this mfa_token');
    }
    if (!step.methods.includes(method))
      throw FactorsErrors.INVALID_BODY(
        `body.method: must be one of ${step.methods.join(', ')} (the second factors this sign-in may be completed with)`,
      );
    const done = [step.authentication];
    const person = await deps.directory.get(orgId, step.personId);
    // The policy is read again: a factor the organization stopped counting since the first step is refused.
    const policy = await deps.policies.get(orgId);
    if (!person?.active || !policy.secondFactors.includes(method) || policy.secondFactor === 'off') {
      await tokens.fail(step.digest);
      const detail = !person?.active
        ? 'the person is disabled or deleted'
        : `the organization's policy no longer counts ${method} as a second factor`;
      await events.failed(orgId, rc, {
        method,
        reason: person?.active ? 'method_not_allowed' : 'person_disabled',
        detail,
        ...(person ? { person, done } : {}),
      });
      throw person?.active ? FactorsErrors.FACTOR_NOT_ALLOWED(detail) : FactorsErrors.MFA_TOKEN_REFUSED();
    }

    const [outcome] = await deps.hooks.run(checkSecondFactor, {
      orgId,
      personId: step.personId,
      method,
      input: req.input,
      rc,
    });
    if (!outcome) {
      const detail = `no enabled plugin checks ${method}`;
      await events.failed(orgId, rc, { method, reason: 'method_not_available', detail, person, done });
      throw FactorsErrors.FACTOR_NOT_ALLOWED(detail);
    }
    if (!outcome.ok) {
      if (outcome.reason !== 'rate_limited') await tokens.fail(step.digest);
      await events.failed(orgId, rc, {
        method,
        reason: outcome.reason,
        detail: outcome.detail,
        person,
        done,
      });
      if (outcome.reason === 'rate_limited') throw tooMany(outcome.retryAfter ?? 60, `for this ${method}`);
      throw FactorsErrors.SECOND_FACTOR_FAILED(outcome.detail);
    }
    // Used up before the token is issued: of two racing requests with good codes, one signs in.
    if (!(await tokens.consume(step.digest))) {
      await events.failed(orgId, rc, {
        method,
        reason: 'invalid_mfa_token',
        detail: 'the mfa_token was used meanwhile',
        person,
        done,
      });
      throw FactorsErrors.MFA_TOKEN_REFUSED();
    }
    return deps.issue(orgId, person, [...done, outcome.authentication], rc, step.prevAnonymousPersonId);
  };
}
