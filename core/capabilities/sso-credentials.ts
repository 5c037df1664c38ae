import { defineCapability } from '../contract/capabilities.ts';
import type { SsoProvider } from '../sso/define-provider.ts';

/** A stored SSO credential, opened: what the sign-in flow needs of it. */
export interface OpenedSsoCredential {
  provider: string;
  clientId: string;
  /** Names the credential in its redirect URIs (core/sso/redirect-uris.ts): random, unique, stable. */
  callbackId: string;
  /** Opened from its sealed form for this use only; never logged or returned by an API. */
  clientSecret: string;
  /** The provider's own options of the credential (validated by the provider's schema when stored). */
  options: unknown;
  /** The configured authorize_scopes (or the provider's defaults) united with the always-requested ones. */
  effectiveScopes: string[];
  enableInServiceOidcAuthzServer: boolean;
}

/** A stored SSO credential as a list shows it: no secret, nothing opened. */
export interface SsoCredentialSummary {
  provider: string;
  clientId: string;
  /** The credential's label; empty when it has none. */
  label: string;
  /**
   * The provider's public options of the credential as stored (checked by the provider's schema when
   * written), without its write-only ones (Apple's `private_key`): enough to find the provider's
   * endpoints, such as an OIDC credential's `issuer`, without opening any secret.
   */
  options: Readonly<Record<string, unknown>>;
  enableInServiceOidcAuthzServer: boolean;
}

/** The organization's SSO credentials and the deployment's providers, for the sign-in flow. */
export interface SsoCredentials {
  /** The organization's credentials, in creation order: public fields only, no secret is opened. */
  list(orgId: string): Promise<SsoCredentialSummary[]>;
  /**
   * The credential a redirect URI names by its callback ID (any organization's): its organization and
   * client ID, nothing opened; undefined when no credential has that callback ID.
   */
  byCallback(callbackId: string): Promise<{ orgId: string; clientId: string } | undefined>;
  /** The credential of this organization with this client ID, opened; undefined when there is none. */
  open(orgId: string, clientId: string): Promise<OpenedSsoCredential | undefined>;
  /** The registered provider of this id, or undefined when the deployment does not list it. */
  provider(id: string): SsoProvider<string, unknown> | undefined;
}

/** Provided by the sso plugin. */
export const ssoCredentials = defineCapability<SsoCredentials>('ssoCredentials');
