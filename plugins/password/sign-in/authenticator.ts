import type {
  PasswordAuthenticator,
  PasswordCheck,
} from '../../../core/capabilities/password-authenticator.ts';
import {
  type AnalyticsContext,
  isHandleType,
  type PersonDirectory,
} from '../../../core/capabilities/person-directory.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { createSignIn } from './sign-in.ts';

/**
 * The sign-in request context of a caller that knows only the analytics of its request (the hosted login
 * of the authorization endpoint): the address limits use its client address, the failure events its user
 * agent and origin.
 */
const contextOf = (request: AnalyticsContext): RequestContext => ({
  clientIp: request.clientIpAddress,
  analytics: request,
  browser: {
    user_agent: request.userAgent ?? '',
    window_location: request.origin ?? '',
    service_sdk_version: '',
  },
});

/**
 * The passwordAuthenticator capability: the password check of POST /authenticate/password (limits,
 * one argon2id verification whatever the outcome, AuthenticationFailed_v1 on every refusal) for other
 * sign-in surfaces, which issue the token and report the success themselves.
 */
export function createPasswordAuthenticator(deps: {
  directory: PersonDirectory;
  verify: ReturnType<typeof createSignIn>['verify'];
  allowed: ReturnType<typeof createSignIn>['allowed'];
}): PasswordAuthenticator {
  return {
    async check(orgId, input): Promise<PasswordCheck> {
      let handle: ReturnType<PersonDirectory['normaliseHandle']>;
      let malformed: string | undefined;
      try {
        handle = deps.directory.normaliseHandle(input.handle);
      } catch (error) {
        if (!(error instanceof ServiceError && error.status === 400)) throw error;
        // A handle no person can have (`bob@` as an email address): the same answer as an unknown one,
        // after the same limits and hash, and reported as one (AuthenticationFailed_v1), not dropped.
        const value = input.handle.value.trim();
        if (!value || !isHandleType(input.handle.type)) return { ok: false, reason: 'invalid_credentials' };
        handle = { type: input.handle.type, value };
        malformed = error.message;
      }
      const rc = contextOf(input.request);
      // A policy without the password refuses it here too (reported), as it does on the API.
      if (!(await deps.allowed(orgId, handle, rc))) return { ok: false, reason: 'invalid_credentials' };
      const checked = await deps.verify(orgId, handle, input.password, rc, malformed);
      if (checked.ok)
        return { ok: true, personId: checked.person.personId, authentication: checked.authentication };
      return checked.reason === 'rate_limited'
        ? { ok: false, reason: 'rate_limited', retryAfter: checked.retryAfter }
        : { ok: false, reason: 'invalid_credentials' };
    },
  };
}
