import { defineHook } from '../contract/hooks.ts';
import type { JsonValue } from '../ports/event-bus.ts';

/** One authentication that led to the token, as the `token_minted` hook's `trigger_content` lists it. */
export interface TokenAuthentication {
  handle: { type: string; value: string };
  /** The factor, such as `password` or `oidc`. */
  method: string;
  /** RFC 3339. */
  timestamp: string;
}

/** The spec's `trigger_content` of the `token_minted` synchronous hook. */
export interface TokenMintedContent {
  /** The organization ID. */
  aud: string;
  iss: string;
  /** The person the token is for. */
  sub: string;
  region: string;
  first_token: boolean;
  groups_claim_name: string;
  authentications: TokenAuthentication[];
  request_metadata: { client_ip_address?: string; origin?: string; user_agent?: string };
}

/** What the token issuer knows just before it signs: the claims it will sign and why it issues. */
export interface TokenDraft {
  readonly orgId: string;
  readonly personId: string;
  /** What issues the token: a factor's sign-in, an anonymous person's first token, the OAuth server. */
  readonly issuer: 'authentication' | 'anonymous' | 'oauth2' | (string & {});
  /** The claims as they stand; handlers return additions, never change this object. */
  readonly claims: Readonly<Record<string, JsonValue>>;
  readonly content: TokenMintedContent;
  /**
   * Whether the issuer refuses a claim of this name from a handler, blocking the token: registered and
   * reserved claims, the organization's groups claim, the deployment's own claim and, for an ID token,
   * its own claims. A handler can judge its additions by the issuer's rule before returning them.
   */
  readonly refusesClaim: (claim: string) => boolean;
}

/** A handler's answer: custom claims to add (registered and service claims are refused by the issuer). */
export interface TokenHookResult {
  readonly claims?: Readonly<Record<string, JsonValue>>;
}

/**
 * Called by the token issuer before it signs a token for an authentication or registration. Handlers
 * (the webhooks plugin's `token_minted` sync hook, for one) return custom claims to add, or throw a
 * ServiceError to block issuance (the authentication then fails with that error).
 *
 * @example
 * attach: [beforeTokenIssued.attach({ match: (t) => t.issuer !== 'oauth2', run: (t) => ({ claims: { plan: 'pro' } }) })]
 */
export const beforeTokenIssued = defineHook<TokenDraft, TokenHookResult | undefined>('beforeTokenIssued');
