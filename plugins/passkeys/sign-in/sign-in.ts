import type * as v from 'valibot';
import type {
  PersonDirectory,
  PersonHandle,
  PersonRecord,
} from '../../../core/capabilities/person-directory.ts';
import type { SignInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { addressBucket } from '../../../core/http/client.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import type { TokenAuthentication } from '../../../core/tokens/before-token-issued.ts';
import type { Assertions } from '../ceremony/assertion.ts';
import type { RelyingParties } from '../ceremony/relying-party.ts';
import { PasskeyErrors } from '../errors.ts';
import type { SignInBody } from '../schema.ts';
import type { Passkey } from '../store/credentials.ts';

export interface SignInDeps {
  directory: PersonDirectory;
  assertions: Assertions;
  relyingParties: RelyingParties;
  /** The factors plugin's completion when one is enabled; the direct one otherwise. */
  completion: () => Pick<SignInCompletion, 'afterFirstFactor'> & Partial<Pick<SignInCompletion, 'allows'>>;
  events: EventPublisher;
  clock: Clock;
  perAddress: TokenBuckets;
  userVerification: 'required' | 'preferred';
}

/** The answer of POST /authenticate/webauthn: the token, or the second step the policy asks for. */
export type SignInAnswer =
  | { token: string; person_id: string }
  | { person_id: string; mfa_required: true; mfa_token: string; methods: string[] };

/** The authentication a passkey stands for: the person's first handle names it, else the passkey. */
export const authenticationOf = (
  person: PersonRecord,
  passkey: Passkey,
  now: number,
): TokenAuthentication => {
  const held = person.handles[0];
  return {
    handle: held
      ? { type: held.type, value: held.value }
      : { type: 'webauthn_credential', value: passkey.credentialId },
    method: 'webauthn',
    timestamp: new Date(now).toISOString(),
  };
};

/** Takes one attempt from the client address's budget, or throws the 429 with Retry-After. */
export async function limitAddress(
  perAddress: TokenBuckets,
  orgId: string,
  rc: RequestContext,
): Promise<void> {
  if (!rc.clientIp) return;
  const take = await perAddress.take(`${orgId}|${addressBucket(rc.clientIp)}`);
  if (!take.ok)
    throw PasskeyErrors.TOO_MANY_ATTEMPTS.with({
      headers: { 'retry-after': String(take.retryAfterSeconds) },
    })(`too many passkey attempts from this address; retry after ${take.retryAfterSeconds} s`);
}

/**
 * Passkeys as a first factor (POST /authenticate/webauthn/options and /authenticate/webauthn):
 * discoverable credentials, so no handle is needed; a handle, when sent, binds the challenge to its
 * person without saying whether it names one (the options are the same). Every refused answer is an
 * AuthenticationFailed_v1.
 */
export function createSignIn(deps: SignInDeps) {
  const { directory, assertions, events } = deps;

  /** Whether the policy allows passkeys as a first factor now. */
  async function allowsFirstFactor(orgId: string): Promise<boolean> {
    const allows = deps.completion().allows;
    return allows ? allows(orgId, 'webauthn') : deps.relyingParties.allowsFirstFactor(orgId);
  }

  async function allowed(orgId: string): Promise<void> {
    if (!(await allowsFirstFactor(orgId)))
      throw PasskeyErrors.FACTOR_NOT_ALLOWED(
        "the organization's authentication policy does not allow webauthn (passkeys) as a first factor",
      );
  }

  async function options(orgId: string, handle: PersonHandle | undefined, rc: RequestContext) {
    await limitAddress(deps.perAddress, orgId, rc);
    await allowed(orgId);
    const person = handle
      ? await directory.findByHandle(orgId, directory.normaliseHandle(handle))
      : undefined;
    return assertions.options(orgId, 'sign_in', {
      personId: person?.personId ?? null,
      forHandle: handle !== undefined,
      userVerification: deps.userVerification,
    });
  }

  async function failed(
    orgId: string,
    rc: RequestContext,
    reason: string,
    detail: string,
    person?: PersonRecord,
  ): Promise<void> {
    await events.publish(orgId, 'AuthenticationFailed_v1', {
      analytics_metadata: analyticsMetadata(rc.analytics),
      // person_id and authenticated_methods only once the passkey had signed (a disabled person).
      ...(person
        ? { person_id: person.personId, region: person.region, authenticated_methods: ['webauthn'] }
        : {}),
      failed_authn_method: 'webauthn',
      failure_reason: reason,
      failure_detail: detail,
    });
  }

  /**
   * Checks a sign-in assertion: the person (active) and the authentication it stands for, or why not
   * (AuthenticationFailed_v1 published). Both the API's sign-in and the hosted login's use it.
   */
  async function firstFactor(
    orgId: string,
    body: v.InferOutput<typeof SignInBody>,
    rc: RequestContext,
  ): Promise<
    | { ok: true; person: PersonRecord; authentication: TokenAuthentication }
    | { ok: false; reason: string; detail: string }
  > {
    await limitAddress(deps.perAddress, orgId, rc);
    await allowed(orgId);
    const checked = await assertions.verify(orgId, 'sign_in', body.challenge_id, body.response, {
      requireUserVerification: deps.userVerification === 'required',
    });
    if (!checked.ok) {
      await failed(orgId, rc, checked.reason, checked.detail);
      return { ok: false, reason: checked.reason, detail: checked.detail };
    }
    const person = await directory.get(orgId, checked.passkey.personId);
    if (!person?.active) {
      await failed(orgId, rc, 'person_disabled', 'this person is disabled', person);
      return { ok: false, reason: 'person_disabled', detail: 'this person is disabled' };
    }
    return { ok: true, person, authentication: authenticationOf(person, checked.passkey, deps.clock.now()) };
  }

  async function signIn(
    orgId: string,
    body: v.InferOutput<typeof SignInBody>,
    rc: RequestContext,
  ): Promise<SignInAnswer> {
    const checked = await firstFactor(orgId, body, rc);
    if (!checked.ok) {
      if (checked.reason === 'challenge_refused')
        throw PasskeyErrors.CHALLENGE_REFUSED(`challenge_id: ${checked.detail}; ask for new options`);
      throw PasskeyErrors.INVALID_CREDENTIALS();
    }
    const done = await deps.completion().afterFirstFactor({
      orgId,
      person: checked.person,
      authentication: checked.authentication,
      rc,
    });
    return done.kind === 'token'
      ? { token: done.token, person_id: done.person_id }
      : { person_id: done.person_id, mfa_required: true, mfa_token: done.mfa_token, methods: done.methods };
  }

  return { options, firstFactor, signIn, allowsFirstFactor };
}

export type PasskeySignIn = ReturnType<typeof createSignIn>;
