import { defineHook } from '../contract/hooks.ts';
import type { Transaction } from '../ports/storage.ts';

/** A token just revoked, and the revoking transaction. */
export interface TokenRevoked {
  readonly orgId: string;
  /** The token's `jti`. */
  readonly tokenId: string;
  /** The person the token was for, when the caller knows it. */
  readonly personId?: string;
  /** Why: the person logged out (`POST /logout`), or the API key holder revoked it (`POST /token/revoke`). */
  readonly reason: 'logout' | 'api';
  /** The transaction that records the revocation: write in it, so all goes or nothing does. */
  readonly tx: Transaction;
}

/**
 * Called by the tokens plugin inside the transaction that revokes a token, once it is newly revoked
 * (never for a token that already was). The seam for what goes with a token: the OAuth plugin attaches
 * here to revoke the refresh-token family issued with it. A handler that throws rolls the revocation
 * back, and the caller gets the error.
 *
 * @example
 * attach: [onTokenRevoked.attach({ run: ({ orgId, tokenId, tx }) => revokeFamilyOf(tx, orgId, tokenId) })]
 */
export const onTokenRevoked = defineHook<TokenRevoked, void>('onTokenRevoked');
