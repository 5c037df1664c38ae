import { defineCapability } from '../contract/capabilities.ts';
import type { RequestContext } from '../http/sign-in-context.ts';
import type { TokenAuthentication } from '../tokens/before-token-issued.ts';
import type { ProspectivePerson } from './person-directory.ts';

/** An SSO credential a sign-in page may offer: one button. */
export interface SsoChoice {
  /** The credential's client ID: what a page posts and what `idp` names. */
  clientId: string;
  /** The button's text: the credential's label, else the provider's display name. */
  name: string;
  provider: string;
  /**
   * The origin of the provider's authorization endpoint (from its cached discovery), for the page's
   * CSP form-action; undefined when the provider cannot be reached now.
   */
  origin: string | undefined;
}

/** Why a provider sign-in could not begin. */
export interface SsoStartRefusal {
  ok: false;
  /** `not_enabled`: no credential of the organization with that client ID is enabled for the authorization server. */
  reason: 'not_enabled' | 'provider_error';
  message: string;
}

/** A provider's answer that signed someone in: the person, found or prospective. */
export interface SsoSignedIn {
  ok: true;
  /** What `start` was given: the sign-in this answer finishes. */
  binding: string;
  orgId: string;
  personId: string;
  region: string;
  /**
   * The person's first sign-in: not stored yet. Hand it to the token issuer (IssueRequest.prospective),
   * which stores it once the token_minted hook allows the token.
   */
  prospective?: ProspectivePerson;
  /**
   * Optional; only with `prospective`. For when storing that person fails with a 409 (a ServiceError
   * from the issuer): another sign-in of the same person, or the API, stored a person with the address
   * meanwhile. Call it at most once: it finds that person under the same checks as any sign-in
   * (verified address, active) and answers it, stored, to issue the token for (no `prospective`), or
   * the failure, which it has reported (AuthenticationFailed_v1): the caller reports nothing more. It
   * resolves; it does not reject. Without it, the caller cannot link the sign-in and says so (the hosted
   * login asks the person to sign in again).
   */
  linkStored?: () => Promise<SsoStoredSignIn | SsoFailed>;
  /** The credential's provider id (`google`, or a generic OIDC provider's). */
  provider: string;
  authentication: TokenAuthentication;
}

/** A sign-in of a person stored already: what `linkStored` answers, and what an answer is without a first sign-in. */
export type SsoStoredSignIn = Omit<SsoSignedIn, 'prospective' | 'linkStored'>;

/** A provider's answer that signed nobody in, already reported (AuthenticationFailed_v1). */
export interface SsoFailed {
  ok: false;
  /** Undefined when the state names no sign-in started for a binding. */
  binding: string | undefined;
  orgId: string | undefined;
  /**
   * AuthenticationFailed_v1's failure_reason: `access_denied` (the person refused at the provider),
   * `provider_error`, `bad_id_token`, `no_email`, `unverified_email`, `person_disabled`,
   * `replayed_state`, `expired_state`, `unknown_state`, `unknown_callback`, `wrong_callback`,
   * `issuer_mismatch`, `not_enabled`, `unverified_handle`, `other_browser`, `invalid_callback`, `sign_in_error` (an unexpected error), and from `linkStored`
   * `token_not_issued` (the person stored meanwhile could not be read, or is gone again).
   */
  reason: string;
  message: string;
}

/** What a provider's answer came to: the person (found, or prospective), or why not (already reported). */
export type SsoFinish = SsoSignedIn | SsoFailed;

/**
 * Sign-in with an organization's SSO credentials for another sign-in surface (the hosted login of the
 * authorization endpoint): the provider round trip of SSO sign-in (state, nonce, PKCE, the ID token's
 * verification, find-or-create by verified email) bound to the caller's own pending request. Only
 * credentials with `enable_in_service_oidc_authz_server` are offered or started. Failures publish
 * AuthenticationFailed_v1 (method oidc); the caller issues the token and publishes
 * AuthenticationSucceeded_v1 once it has one.
 *
 * @example
 * const url = await sso.start(orgId, 'google-client-id', { binding: loginHash, callbackUrl: (id) => `${base}/cb/${id}` });
 * // ... the provider redirects the browser to the credential's callback ...
 * const done = await sso.finish(new URL(request.url).searchParams, rc, { callbackId: params.callback_id });
 */
export interface SsoAuthenticator {
  /** The organization's credentials enabled for the authorization server, in creation order. */
  choices(orgId: string): Promise<SsoChoice[]>;
  /**
   * The provider's authorization URL for a credential enabled for the authorization server, recording
   * a single-use state bound to `binding`; the provider redirects to `callbackUrl(callbackId)`, the
   * credential's own callback (registered there; core/sso/redirect-uris.ts).
   */
  start(
    orgId: string,
    clientId: string,
    bound: { binding: string; callbackUrl: (callbackId: string) => string },
  ): Promise<{ ok: true; url: string } | SsoStartRefusal>;
  /**
   * Finishes the sign-in the callback's parameters (`state`, `code` or `error`) answer; burns the state.
   * `callbackId` is the one the callback's path names: a state started for another credential is
   * refused (failure `wrong_callback`, reported) before anything is sent to a provider, and a callback
   * ID of no credential is `unknown_callback` (nothing burnt). `accept`, when given, is asked about the
   * state's binding once the state is burnt and before the code is exchanged (the caller checks the
   * browser that started the sign-in sent the answer): a message refuses the answer (failure
   * `other_browser`, reported), so nothing else happens.
   */
  finish(
    params: URLSearchParams,
    rc: RequestContext,
    at: { callbackId: string; accept?: (binding: string) => Promise<string | undefined> },
  ): Promise<SsoFinish>;
}

/** Provided by the sso-signin plugin. */
export const ssoAuthenticator = defineCapability<SsoAuthenticator>('ssoAuthenticator');
