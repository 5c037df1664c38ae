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

/** A sign-in link of a hosted login, as the link's page shows it. */
export interface HostedLoginLink {
  orgId: string;
  /** What `sendLink` bound it to: the hosted login's key for its login. */
  binding: string;
  /** The address it was sent to. */
  handle: string;
  /** When it was asked for (RFC 3339), and from where and with what, as the service saw it. */
  askedAt: string;
  askedFrom: string | null;
  askedWith: string | null;
}

/** Who a used code or link signed in (no token yet). */
export interface EmailSignedIn {
  personId: string;
  authentication: TokenAuthentication;
}

/** What the login's own window finds for its link: used now, not pressed yet (`pending`), or refused. */
export type EmailLinkUse =
  | EmailCodeOutcome<EmailSignedIn>
  | { ok: false; reason: 'pending'; message: string };

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
   * Sends an email_link bound to one login of the hosted login (`binding`, its key for it) that leads to
   * `linkUrl?token=`: the same answer for every address, as `send`. Only `useLinkHere` and `useLink`
   * with that binding use it; POST /authenticate/email/verify and /email/sign-in know nothing of it.
   */
  sendLink(
    orgId: string,
    handle: PersonHandle,
    rc: RequestContext,
    bound: { binding: string; linkUrl: string },
  ): Promise<EmailCodeOutcome<SentEmailCode>>;
  /** The open (sent, unexpired) hosted-login link of a token, for its page; limited per address. */
  openLink(token: string, rc: RequestContext): Promise<EmailCodeOutcome<{ link: HostedLoginLink }>>;
  /** The link's button pressed in the browser of its login: used at once, for the login `binding`. */
  useLinkHere(token: string, binding: string, rc: RequestContext): Promise<EmailCodeOutcome<EmailSignedIn>>;
  /** The link's button pressed in another browser: confirmed, for its login's window to use. */
  confirmLink(token: string, rc: RequestContext): Promise<EmailCodeOutcome<{ link: HostedLoginLink }>>;
  /** The login's window ("Continue"): its confirmed link used; `pending` until the button is pressed. */
  useLink(orgId: string, challengeId: string, binding: string, rc: RequestContext): Promise<EmailLinkUse>;
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
