import { defineCapability } from '../contract/capabilities.ts';
import type { RequestContext } from '../http/sign-in-context.ts';
import type { TokenAuthentication } from '../tokens/before-token-issued.ts';
import type { PersonHandle } from './person-directory.ts';

/**
 * An outcome of the email codes, for a page to show: done, refused (its message, for the person), or
 * past a rate limit (the seconds to wait, the page's Retry-After).
 */
export type EmailCodeOutcome<T> =
  | ({ ok: true } & T)
  | { ok: false; reason: 'refused'; message: string }
  | { ok: false; reason: 'rate_limited'; retryAfter: number; message: string };

/** A code on its way: the challenge the code page carries, and when it stops working (ISO 8601). */
export interface SentEmailCode {
  challengeId: string;
  expiresAt: string;
}

/**
 * Sign-in codes by email for the hosted login (the authorization endpoint's pages): the extension point
 * the hosted login (oauth2-authorize) calls and the email-codes plugin provides, with that plugin's
 * challenges, messages, limits and events (AuthenticationFailed_v1 for each refused code). No call
 * issues a token: the hosted login finishes the sign-in as it finishes a password's.
 */
export interface HostedLoginEmailCodes {
  /**
   * Sends a 6-digit code to an email address of the organization: the same answer, at the same pace,
   * whether the handle names an active person or nobody (no message then).
   */
  send(orgId: string, handle: PersonHandle, rc: RequestContext): Promise<EmailCodeOutcome<SentEmailCode>>;
  /** Checks a code `send` sent, and uses it: who signed in with `otp_via_email`. */
  check(
    orgId: string,
    challengeId: string,
    code: string,
    rc: RequestContext,
  ): Promise<EmailCodeOutcome<{ personId: string; authentication: TokenAuthentication }>>;
  /**
   * Sends a code to the person's email address for the second step of a sign-in; the checkSecondFactor
   * hook checks it (method `otp_via_email`, input `{challenge_id, code}`).
   */
  sendSecondFactor(
    orgId: string,
    personId: string,
    rc: RequestContext,
  ): Promise<EmailCodeOutcome<SentEmailCode>>;
}

/** Declared for the hosted login (oauth2-authorize), which calls it; provided by the email-codes plugin. */
export const hostedLoginEmailCodes = defineCapability<HostedLoginEmailCodes>('hostedLoginEmailCodes');
