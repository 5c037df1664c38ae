import {
  eventHandle,
  type PersonHandle,
  type PersonRecord,
} from '../../../core/capabilities/person-directory.ts';
import { type CompletedSignIn, signInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TokenAuthentication } from '../../../core/tokens/before-token-issued.ts';
import type { EmailMethod } from '../schema.ts';

/** Why an email sign-in failed, as AuthenticationFailed_v1's `failure_reason` says it. */
export type FailureReason =
  | 'invalid_code'
  | 'unknown_challenge'
  | 'expired'
  | 'used'
  | 'too_many_attempts'
  | 'method_not_allowed'
  | 'person_disabled'
  | 'token_blocked'
  | 'token_not_issued';

/** What POST /authenticate/email/verify answers on success: the token, or the second step. */
export type SignInAnswer =
  | { token: string; person_id: string }
  | { person_id: string; mfa_required: true; mfa_token: string; methods: string[] };

export const answerOf = (done: CompletedSignIn): SignInAnswer =>
  done.kind === 'token'
    ? { token: done.token, person_id: done.person_id }
    : { person_id: done.person_id, mfa_required: true, mfa_token: done.mfa_token, methods: done.methods };

/**
 * The end of an email sign-in: through the factors plugin's `signInCompletion` when it is enabled (the
 * policy's second step, every factor in the token), else the token at once, as the password factor
 * issues it. And AuthenticationFailed_v1 for every refusal.
 */
export function createCompletion(ctx: ServiceContext, issuer: TokenIssuer) {
  async function failed(
    orgId: string,
    rc: RequestContext,
    method: EmailMethod,
    handle: PersonHandle | undefined,
    reason: FailureReason,
    detail: string,
    /** The person, once the email factor had succeeded for them (a disabled one, a blocked token). */
    person?: PersonRecord,
  ) {
    await ctx.events.publish(orgId, 'AuthenticationFailed_v1', {
      analytics_metadata: analyticsMetadata(rc.analytics),
      ...(person
        ? { person_id: person.personId, region: person.region, authenticated_methods: [method] }
        : {}),
      failed_authn_method: method,
      failure_reason: reason,
      failure_detail: detail,
      ...(handle ? { handle: eventHandle(handle) } : {}),
    });
  }

  /** Whether the organization's policy allows this first factor now (every one without the factors plugin). */
  const allows = async (orgId: string, method: EmailMethod) =>
    (await ctx.capability(signInCompletion)?.allows(orgId, method)) ?? true;

  async function complete(
    orgId: string,
    person: PersonRecord,
    authentication: TokenAuthentication,
    rc: RequestContext,
  ): Promise<SignInAnswer> {
    const method = authentication.method as EmailMethod;
    const handle = authentication.handle as PersonHandle;
    const completion = ctx.capability(signInCompletion);
    if (completion) return answerOf(await completion.afterFirstFactor({ orgId, person, authentication, rc }));
    let token: string;
    try {
      ({ token } = await issuer.issue({
        orgId,
        personId: person.personId,
        methods: [method],
        issuer: 'authentication',
        authentications: [authentication],
        request: rc.analytics,
      }));
    } catch (error) {
      const blocked = error instanceof ServiceError && error.status === 403;
      const detail = error instanceof Error ? error.message : 'the token could not be issued';
      await failed(orgId, rc, method, handle, blocked ? 'token_blocked' : 'token_not_issued', detail, person);
      throw error;
    }
    await ctx.events.publish(orgId, 'AuthenticationSucceeded_v1', {
      analytics_metadata: analyticsMetadata(rc.analytics),
      browser_metadata: rc.browser,
      person_id: person.personId,
      region: person.region,
      success_authn_method: method,
      authenticated_methods: [method],
      handle: eventHandle(handle),
    });
    return { token, person_id: person.personId };
  }

  return { failed, allows, complete };
}

export type Completion = ReturnType<typeof createCompletion>;
