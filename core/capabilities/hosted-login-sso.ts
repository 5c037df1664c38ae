import { defineCapability } from '../contract/capabilities.ts';
import type { RequestContext } from '../http/sign-in-context.ts';
import type { TokenAuthentication } from '../tokens/before-token-issued.ts';
import type { ProspectivePerson } from './person-directory.ts';
import type { SsoChoice, SsoStartRefusal } from './sso-authenticator.ts';

/** Who an SSO button signed in, as the hosted login mints the ID token for them. */
export interface HostedLoginSignIn {
  personId: string;
  method: 'oidc';
  authentication: TokenAuthentication;
  /** The SSO provider's id, named in the ID token's `idp` claim. */
  idp: string;
  /** A first sign-in's person, stored by the token issuer once the token_minted hook allows the token. */
  prospective?: ProspectivePerson;
  /**
   * With `prospective`: who signed in when the issuer refuses it with a 409 (another sign-in stored
   * the person meanwhile), or the page's message when that person may not sign in (reported).
   */
  linkStored?: () => Promise<Omit<HostedLoginSignIn, 'prospective' | 'linkStored'> | { failed: string }>;
}

/**
 * What the hosted login lends its SSO buttons: its pending logins, its pages and its end. `L` is a
 * pending login, `C` its client and `A` an answer to the browser, all the hosted login's own: the
 * buttons hand them back, never look inside.
 */
export interface HostedLogin<L, C, A> {
  /** How a login's ID is stored and found (its binding to a provider sign-in): SHA-256, base64url. */
  digest(secret: string): Promise<string>;
  /**
   * The open login of this digest of its ID, continued by the browser whose cookie has `browserHash`;
   * else throws the error page saying which failed (`why.unknown`: never started here).
   */
  open(
    loginHash: string,
    browserHash: string | undefined,
    why: { unknown: string; otherBrowser: string },
  ): Promise<L>;
  /** The organization of the login's client. */
  organization(login: L): string;
  /** The login's client as it is now, or the answer when it may no longer have the login's redirect. */
  client(login: L): Promise<{ ok: true; client: C } | { ok: false; answer: A }>;
  /** The login, finished or not, while its authorization request has not expired (a replayed answer's). */
  request(loginHash: string): Promise<{ login: L; browserHash: string } | undefined>;
  /** Marks the login finished; false when another answer finished it first. */
  finish(loginHash: string): Promise<boolean>;
  /** The page again, 400, for the same login (`csrfToken` its ID) with `error`. */
  retry(login: L, client: C, csrfToken: string, error: string): Promise<A>;
  /** The page again, 400, with `error`, for a fresh login of the same request (the old one is burnt). */
  reopen(login: L, client: C, browser: string, error: string): Promise<A>;
  /** Mints the ID token for who signed in, then redirects to the client with a code; or the refusal's message. */
  signIn(
    login: L,
    client: C,
    who: HostedLoginSignIn,
    rc: RequestContext,
  ): Promise<{ ok: true; answer: A } | { ok: false; message: string }>;
  /** Redirects to the client with an error (`access_denied`, say), the login's state and `iss`. */
  refuse(login: L, error: string, description: string): A;
  /** Redirects the browser to `url` (a provider's authorization endpoint). */
  redirect(url: string): A;
  /** The error page (400): no such sign-in here. */
  notFound(message: string): Error;
  /** The error page (403): the sign-in may not continue here. */
  forbidden(message: string): Error;
}

/**
 * The SSO buttons of the hosted login (the authorization endpoint's page): the extension point the
 * hosted login (oauth2-authorize) calls, and a sign-in plugin (sso-signin) provides. Each call carries
 * the hosted login's parts, so the buttons keep no state of their own.
 */
export interface HostedLoginSso {
  /** The organization's credentials enabled for the authorization server: one button each. */
  choices(orgId: string): Promise<SsoChoice[]>;
  /** The provider's URL for a credential, bound to the login `loginId` (an `idp` or a button); or why not. */
  begin<L, C, A>(
    login: HostedLogin<L, C, A>,
    orgId: string,
    loginId: string,
    clientId: string,
  ): Promise<{ ok: true; url: string } | SsoStartRefusal>;
  /** POST /oauth2/authorize/sso: a button of the page; the caller has checked the Origin. */
  choose<L, C, A>(
    login: HostedLogin<L, C, A>,
    form: { csrfToken: string; credential: string },
    browser: string | undefined,
  ): Promise<A>;
  /** GET /oauth2/authorize/sso/callback/{callback_id}: the provider's answer finishes the login bound to it. */
  callback<L, C, A>(
    login: HostedLogin<L, C, A>,
    params: URLSearchParams,
    callbackId: string,
    browser: string | undefined,
    rc: RequestContext,
  ): Promise<A>;
}

/** Declared for the hosted login (oauth2-authorize), which calls it; provided by the sso-signin plugin. */
export const hostedLoginSso = defineCapability<HostedLoginSso>('hostedLoginSso');
