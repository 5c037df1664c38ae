import { defineCapability } from '../contract/capabilities.ts';
import type { TokenAuthentication } from '../tokens/before-token-issued.ts';
import type { AnalyticsContext, PersonHandle } from './person-directory.ts';

/** The outcome of checking a handle and password: the person, or why not (already reported). */
export type PasswordCheck =
  | { ok: true; personId: string; authentication: TokenAuthentication }
  | {
      ok: false;
      /** `invalid_credentials` covers an unknown handle, a wrong password and an inactive person alike. */
      reason: 'invalid_credentials' | 'rate_limited';
      /** Seconds until a rate-limited caller may try again. */
      retryAfter?: number;
    };

/**
 * The password factor as another sign-in surface (the hosted login) uses it: rate limits per handle and
 * per address, the constant-time check, and AuthenticationFailed_v1 on failure. The caller issues the
 * token and emits AuthenticationSucceeded_v1 once it has one.
 */
export interface PasswordAuthenticator {
  check(
    orgId: string,
    input: { handle: PersonHandle; password: string; request: AnalyticsContext },
  ): Promise<PasswordCheck>;
}

/** Provided by the password plugin. */
export const passwordAuthenticator = defineCapability<PasswordAuthenticator>('passwordAuthenticator');
