import type { PersonDirectory, PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { ServiceError } from '../../../core/errors.ts';
import { addressBucket } from '../../../core/http/client.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import type { TokenAuthentication } from '../../../core/tokens/before-token-issued.ts';
import { checkCode, closedReason } from '../challenges/code-check.ts';
import { challengeDigest, normaliseCode } from '../challenges/secrets.ts';
import type { Challenge, ChallengeStore } from '../challenges/store.ts';
import { EmailCodeErrors } from '../errors.ts';
import { CODE_RULE, type EmailMethod } from '../schema.ts';
import type { Completion, FailureReason, SignInAnswer } from './complete.ts';
import { tooMany } from './request.ts';

export interface VerifyDeps {
  storage: Storage;
  clock: Clock;
  directory: PersonDirectory;
  store: ChallengeStore;
  completion: Completion;
  maxAttempts: number;
  perHandle: TokenBuckets;
  perAddress: TokenBuckets;
  perPoll: TokenBuckets;
}

/** What POST /authenticate/email/verify answers: the sign-in, or (an email_link not yet confirmed) pending. */
export type VerifyOutcome =
  | { done: true; answer: SignInAnswer }
  | { done: false; pending: { challenge_id: string; status: 'pending'; expires_at: string } };

/** A challenge used: who it signed in, with which factor (no token yet). */
export interface UsedChallenge {
  person: PersonRecord;
  authentication: TokenAuthentication;
}

type Checked =
  | { done: true; used: UsedChallenge }
  | { done: false; pending: { challenge_id: string; status: 'pending'; expires_at: string } };

/**
 * POST /authenticate/email/verify: an otp_via_email challenge with its code, or an email_link
 * challenge polled with its ID alone until the link's page confirms it. Every refusal publishes
 * AuthenticationFailed_v1 (but for polls of a link not yet confirmed, which are not attempts).
 */
export function createVerification(deps: VerifyDeps) {
  const { store, completion, directory } = deps;
  const ttlMinutes = Math.round(store.ttlMs / 60_000);

  /**
   * Checks a challenge and uses it, without completing the sign-in: what `verify` completes, and what the
   * hosted login checks a code with (it finishes the sign-in itself). Throws the refusal.
   */
  /** AuthenticationFailed_v1 for a refusal, then the refusal thrown. */
  const refuser =
    (orgId: string, rc: RequestContext) =>
    async (
      method: EmailMethod,
      c: Challenge | undefined,
      reason: FailureReason,
      error: ServiceError,
      detail = error.message,
    ): Promise<never> => {
      await completion.failed(orgId, rc, method, c?.handle, reason, detail);
      throw error;
    };

  async function check(
    orgId: string,
    body: { challenge_id: string; code?: string | undefined },
    rc: RequestContext,
  ): Promise<Checked> {
    const guess: EmailMethod = body.code === undefined ? 'email_link' : 'otp_via_email';
    const refuse = refuser(orgId, rc);

    if (rc.clientIp) {
      const take = await deps.perAddress.take(`${orgId}|${addressBucket(rc.clientIp)}`);
      if (!take.ok)
        await refuse(
          guess,
          undefined,
          'too_many_attempts',
          tooMany(take.retryAfterSeconds, 'too many email sign-in attempts from this address'),
        );
    }
    const digest = await challengeDigest(body.challenge_id);
    const challenge = await store.find(orgId, digest);
    // A hosted login's link is that login's alone: the API knows nothing of it.
    if (challenge?.purpose !== 'sign_in' || challenge.boundTo !== null)
      return refuse(
        guess,
        undefined,
        'unknown_challenge',
        EmailCodeErrors.CHALLENGE_REFUSED(
          'challenge_id: no email sign-in is pending with this challenge_id in this organization',
        ),
      );
    const { method } = challenge;
    let code: string | undefined;
    if (method === 'otp_via_email') {
      if (body.code === undefined)
        throw EmailCodeErrors.INVALID_BODY(
          'code: required for an otp_via_email challenge (the 6-digit code of the message)',
        );
      code = normaliseCode(body.code);
      if (!code) throw EmailCodeErrors.INVALID_BODY(`code: ${CODE_RULE}`);
    } else if (body.code !== undefined)
      throw EmailCodeErrors.INVALID_BODY(
        'code: an email_link challenge takes no code; send challenge_id alone until the link is confirmed',
      );
    if (!(await completion.allows(orgId, method)))
      await refuse(method, challenge, 'method_not_allowed', EmailCodeErrors.FACTOR_NOT_ALLOWED(method));

    const limits = method === 'otp_via_email' ? deps.perHandle : deps.perPoll;
    const key =
      method === 'otp_via_email' ? `${orgId}|${challenge.handle.type}|${challenge.handle.value}` : digest;
    const take = await limits.take(key);
    if (!take.ok) {
      const error =
        method === 'otp_via_email'
          ? tooMany(take.retryAfterSeconds, 'too many codes tried for this handle')
          : tooMany(take.retryAfterSeconds, 'challenge_id: polled too often; poll every few seconds');
      if (method === 'email_link') throw error;
      await refuse(method, challenge, 'too_many_attempts', error);
    }

    const closed = closedReason(challenge, deps.clock.now());
    if (closed)
      await refuse(method, challenge, closed === 'exhausted' ? 'too_many_attempts' : closed, refusal(closed));

    if (code !== undefined) {
      const checked = await checkCode(store, challenge, body.challenge_id, code, deps.maxAttempts);
      if (!checked.ok && checked.closed) {
        // Used or voided by another request since it was read: say which.
        const now = await store.find(orgId, digest);
        const why = (now && closedReason(now, deps.clock.now())) ?? 'used';
        await refuse(method, challenge, why === 'exhausted' ? 'too_many_attempts' : why, refusal(why));
      } else if (!checked.ok)
        await refuse(
          method,
          challenge,
          'invalid_code',
          checked.exhausted
            ? refusal('exhausted')
            : EmailCodeErrors.CHALLENGE_REFUSED(
                `code: does not match this challenge; ${deps.maxAttempts - checked.attempts} attempts left`,
              ),
        );
    } else if (challenge.status !== 'confirmed') {
      return {
        done: false,
        pending: {
          challenge_id: body.challenge_id,
          status: 'pending',
          expires_at: new Date(challenge.expiresAt).toISOString(),
        },
      };
    }
    return { done: true, used: await use(orgId, challenge, rc) };
  }

  async function verify(
    orgId: string,
    body: { challenge_id: string; code?: string | undefined },
    rc: RequestContext,
  ): Promise<VerifyOutcome> {
    const checked = await check(orgId, body, rc);
    if (!checked.done) return checked;
    const { person, authentication } = checked.used;
    return { done: true, answer: await completion.complete(orgId, person, authentication, rc) };
  }

  function refusal(why: 'expired' | 'used' | 'exhausted'): ServiceError {
    if (why === 'expired')
      return EmailCodeErrors.CHALLENGE_REFUSED(
        `challenge_id: expired (codes and links work for ${ttlMinutes} minutes); ask for a new one`,
      );
    if (why === 'used')
      return EmailCodeErrors.CHALLENGE_REFUSED('challenge_id: used already; ask for a new code or link');
    return EmailCodeErrors.TOO_MANY_ATTEMPTS.with({ headers: { 'retry-after': '0' } })(
      `challenge_id: void after ${deps.maxAttempts} wrong codes; ask for a new code with POST /authenticate/email`,
    );
  }

  /**
   * Uses the challenge (one success of racing requests), marks the address verified: who signed in. A
   * link is used once confirmed; `from: 'sent'` uses it at its button's press (the hosted login's own
   * browser pressed it).
   */
  async function use(
    orgId: string,
    challenge: Challenge,
    rc: RequestContext,
    from: 'sent' | 'confirmed' = challenge.method === 'email_link' ? 'confirmed' : 'sent',
  ): Promise<UsedChallenge> {
    const refuse = refuser(orgId, rc);
    const { method } = challenge;
    const person = challenge.personId ? await directory.get(orgId, challenge.personId) : undefined;
    if (!person)
      return refuse(
        method,
        challenge,
        'unknown_challenge',
        EmailCodeErrors.CHALLENGE_REFUSED('challenge_id: the person it was sent for no longer exists'),
      );
    if (!person.active) {
      const error = EmailCodeErrors.CHALLENGE_REFUSED(
        'challenge_id: signs nobody in while the person is disabled',
      );
      await completion.failed(orgId, rc, method, challenge.handle, 'person_disabled', error.message, person);
      throw error;
    }
    const used = await deps.storage.transaction(async (tx) => {
      if (!(await store.consume(tx, challenge.digest, from))) return false;
      // The message reached this address and came back: it is the person's.
      await directory.markVerified(orgId, person.personId, challenge.handle, { tx });
      return true;
    });
    if (!used) {
      const now = await store.find(orgId, challenge.digest);
      const why = now && closedReason(now, deps.clock.now());
      return refuse(
        method,
        challenge,
        why === 'expired' ? 'expired' : 'used',
        refusal(why === 'expired' ? 'expired' : 'used'),
      );
    }
    const authentication = {
      handle: challenge.handle,
      method,
      timestamp: new Date(deps.clock.now()).toISOString(),
    };
    return { person, authentication };
  }

  return { verify, check, use, refuser, refusal };
}
