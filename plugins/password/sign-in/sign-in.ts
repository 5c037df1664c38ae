import {
  eventHandle,
  type PersonDirectory,
  type PersonHandle,
  type PersonRecord,
} from '../../../core/capabilities/person-directory.ts';
import type { SignInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { addressBucket } from '../../../core/http/client.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import type { Logger } from '../../../core/log.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import type { TokenAuthentication } from '../../../core/tokens/before-token-issued.ts';
import { PasswordErrors } from '../errors.ts';
import type { Hasher } from '../hashing/hashing.ts';
import { normalisePassword } from '../policy/policy.ts';
import type { CredentialStore } from '../store/credentials.ts';

/** Why a sign-in failed, as AuthenticationFailed_v1's `failure_reason` says it. */
export type FailureReason =
  | 'unknown_handle'
  | 'no_password'
  | 'invalid_credentials'
  | 'person_disabled'
  | 'too_many_attempts'
  | 'token_blocked'
  | 'token_not_issued'
  | 'method_not_allowed';

export interface SignInDeps {
  directory: PersonDirectory;
  issuer: TokenIssuer;
  credentials: CredentialStore;
  hasher: Hasher;
  events: EventPublisher;
  clock: Clock;
  log: Logger;
  perHandle: TokenBuckets;
  perAddress: TokenBuckets;
  /**
   * The end of a sign-in when the factors plugin is enabled (read at each call): its policy may refuse
   * the password or ask for a second factor. Without it, every password sign-in gets its token here.
   */
  completion: () => SignInCompletion | undefined;
}

/** What POST /authenticate/password answers: the token, or the second step the policy asks for. */
export type SignInAnswer =
  | { token: string; person_id: string }
  | { person_id: string; mfa_required: true; mfa_token: string; methods: string[] };

export interface SignInRequest {
  handle: PersonHandle;
  password: string;
  anonymousToken?: string | undefined;
}

/** The outcome of a password check: the person and the authentication, or why not (already reported). */
export type Verified =
  | { ok: true; person: PersonRecord; authentication: TokenAuthentication }
  | { ok: false; reason: 'invalid_credentials' }
  | { ok: false; reason: 'rate_limited'; retryAfter: number; what: string };

const tooMany = (retryAfterSeconds: number, what: string) =>
  PasswordErrors.TOO_MANY_ATTEMPTS.with({ headers: { 'retry-after': String(retryAfterSeconds) } })(
    `too many sign-in attempts ${what}; retry after ${retryAfterSeconds} s`,
  );

/**
 * POST /authenticate/password (`signIn`: every attempt ends in AuthenticationSucceeded_v1 or
 * AuthenticationFailed_v1) and the password check other surfaces share (`verify`).
 */
export function createSignIn(deps: SignInDeps) {
  const { directory, issuer, credentials, hasher, events, log } = deps;

  async function failed(
    orgId: string,
    rc: RequestContext,
    handle: PersonHandle,
    reason: FailureReason,
    detail: string,
    person?: PersonRecord,
    /** The methods that had succeeded when it failed (the password, before the token was refused). */
    authenticated?: string[],
  ) {
    // The service reports it (source Cloud), so no browser_metadata: the spec has it "when from the SDK".
    await events.publish(orgId, 'AuthenticationFailed_v1', {
      analytics_metadata: analyticsMetadata(rc.analytics),
      // The spec's person_id, region and authenticated_methods come "only if previously authenticated":
      // together, once a method had succeeded for the person, never for a handle that merely names one.
      ...(person && authenticated
        ? { person_id: person.personId, region: person.region, authenticated_methods: authenticated }
        : {}),
      failed_authn_method: 'password',
      failure_reason: reason,
      failure_detail: detail,
      handle: eventHandle(handle),
    });
  }

  /** The anonymous person a valid token of this organization names; anything else is ignored. */
  async function previousAnonymous(orgId: string, token: string | undefined): Promise<string | undefined> {
    if (!token) return undefined;
    const check = await issuer.validate(token);
    if (!check.valid || check.claims.oid !== orgId) return undefined;
    const personId = check.claims.person_id ?? check.claims.sub;
    if (typeof personId !== 'string') return undefined;
    const person = await directory.get(orgId, personId);
    return person?.personType === 'anonymous' ? person.personId : undefined;
  }

  /**
   * The password check every surface shares: the per-address and per-handle limits, one argon2id
   * verification whatever the outcome, the rehash of an outdated hash, and AuthenticationFailed_v1 for
   * every refusal. The caller issues the token.
   */
  async function verify(
    orgId: string,
    handle: PersonHandle,
    password: string,
    rc: RequestContext,
    /** Why no person can have this handle (`bob@` as an email address): it is then as unknown. */
    malformed?: string,
  ): Promise<Verified> {
    // The address first: a client spraying many handles is stopped without using their budgets.
    if (rc.clientIp) {
      const take = await deps.perAddress.take(`${orgId}|${addressBucket(rc.clientIp)}`);
      if (!take.ok) {
        await failed(orgId, rc, handle, 'too_many_attempts', 'too many attempts from this client address');
        return {
          ok: false,
          reason: 'rate_limited',
          retryAfter: take.retryAfterSeconds,
          what: 'from this address',
        };
      }
    }
    const take = await deps.perHandle.take(`${orgId}|${handle.type}|${handle.value}`);
    if (!take.ok) {
      await failed(orgId, rc, handle, 'too_many_attempts', 'too many attempts for this handle');
      return {
        ok: false,
        reason: 'rate_limited',
        retryAfter: take.retryAfterSeconds,
        what: 'for this handle',
      };
    }

    const normal = normalisePassword(password);
    const person = malformed === undefined ? await directory.findByHandle(orgId, handle) : undefined;
    const stored = person ? await credentials.hashOf(orgId, person.personId) : undefined;
    // A hash stored before the cost limits (or written to the table by hand) that breaks them is never
    // verified: whoever knows the handle could otherwise make every attempt cost what it says.
    const unverifiable = stored ? hasher.problemOf(stored) : undefined;
    if (person && unverifiable)
      log.warn('stored password hash refused without verifying: set a new password or send a reset link', {
        org_id: orgId,
        person_id: person.personId,
        problem: unverifiable,
      });
    // Exactly one hash is verified whatever the outcome, so a 401 takes as long for every reason.
    const matched =
      stored && !unverifiable ? await hasher.verify(stored, normal) : await hasher.verifyDummy(normal);
    const refusal: [FailureReason, string] | undefined = !person
      ? [
          'unknown_handle',
          malformed ? `no person can have this handle (${malformed})` : 'no person has this handle',
        ]
      : !stored
        ? ['no_password', 'this person has no password']
        : unverifiable
          ? ['invalid_credentials', `the stored hash was not verified: ${unverifiable}`]
          : !matched
            ? ['invalid_credentials', 'the password does not match the one set for this handle']
            : !person.active
              ? ['person_disabled', 'this person is disabled']
              : undefined;
    if (refusal || !person || !stored) {
      const [reason, detail] = refusal ?? ['invalid_credentials', 'no password'];
      // A disabled person's password did match: the person had authenticated, then was refused.
      const authenticated = reason === 'person_disabled' ? ['password'] : undefined;
      await failed(orgId, rc, handle, reason, detail, person, authenticated);
      return { ok: false, reason: 'invalid_credentials' };
    }

    if (hasher.needsRehash(stored)) {
      // Imported (bcrypt) or older parameters: the password is known now, so store today's argon2id.
      await credentials
        .rehash(orgId, person.personId, stored, await hasher.hash(normal))
        .catch((error) =>
          log.warn('password rehash failed', { person_id: person.personId, error: String(error) }),
        );
    }
    return {
      ok: true,
      person,
      authentication: { handle, method: 'password', timestamp: new Date(deps.clock.now()).toISOString() },
    };
  }

  /**
   * Whether the organization's policy allows the password now; a refusal is reported, before any limit
   * is taken or hash verified.
   */
  async function allowed(orgId: string, handle: PersonHandle, rc: RequestContext): Promise<boolean> {
    const completion = deps.completion();
    if (!completion || (await completion.allows(orgId, 'password'))) return true;
    await failed(
      orgId,
      rc,
      handle,
      'method_not_allowed',
      "the organization's policy does not allow password sign-in",
    );
    return false;
  }

  async function signIn(orgId: string, req: SignInRequest, rc: RequestContext): Promise<SignInAnswer> {
    const handle = directory.normaliseHandle(req.handle);
    if (!(await allowed(orgId, handle, rc))) throw PasswordErrors.METHOD_NOT_ALLOWED();
    const checked = await verify(orgId, handle, req.password, rc);
    if (!checked.ok) {
      if (checked.reason === 'rate_limited') throw tooMany(checked.retryAfter, checked.what);
      throw PasswordErrors.INVALID_CREDENTIALS();
    }
    const { person } = checked;

    const prevAnonymousPersonId = await previousAnonymous(orgId, req.anonymousToken);
    const completion = deps.completion();
    if (completion) {
      // The policy decides: the token (issued and reported there), or the second step.
      const done = await completion.afterFirstFactor({
        orgId,
        person,
        authentication: checked.authentication,
        rc,
        ...(prevAnonymousPersonId ? { prevAnonymousPersonId } : {}),
      });
      return done.kind === 'token'
        ? { token: done.token, person_id: done.person_id }
        : { person_id: done.person_id, mfa_required: true, mfa_token: done.mfa_token, methods: done.methods };
    }
    const authentications = [checked.authentication];
    let issued: Awaited<ReturnType<TokenIssuer['issue']>>;
    try {
      issued = await issuer.issue({
        orgId,
        personId: person.personId,
        methods: ['password'],
        issuer: 'authentication',
        authentications,
        ...(prevAnonymousPersonId ? { prevAnonymousPersonId } : {}),
        request: rc.analytics,
      });
    } catch (error) {
      const blocked = error instanceof ServiceError && error.status === 403;
      await failed(
        orgId,
        rc,
        handle,
        blocked ? 'token_blocked' : 'token_not_issued',
        error instanceof Error ? error.message : 'the token could not be issued',
        person,
        ['password'],
      );
      throw error;
    }
    await events.publish(orgId, 'AuthenticationSucceeded_v1', {
      analytics_metadata: analyticsMetadata(rc.analytics),
      browser_metadata: rc.browser,
      person_id: person.personId,
      region: person.region,
      success_authn_method: 'password',
      authenticated_methods: ['password'],
      handle: eventHandle(handle),
    });
    return { token: issued.token, person_id: person.personId };
  }

  return { signIn, verify, allowed };
}
