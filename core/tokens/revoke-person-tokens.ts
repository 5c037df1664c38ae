import { defineHook } from '../contract/hooks.ts';
import type { Transaction } from '../ports/storage.ts';

/** Every token of a person issued before a moment stops working. */
export interface PersonTokensRevocation {
  readonly orgId: string;
  readonly personId: string;
  /** Clock milliseconds: tokens issued before this are revoked, tokens issued later are not. */
  readonly before: number;
  /** Why: the person reset a forgotten password (the only caller today). */
  readonly reason: 'password_reset';
  /** The transaction of the change that revokes them: write in it, so all goes or nothing does. */
  readonly tx: Transaction;
}

/**
 * Called by the password plugin inside the transaction that sets a password through a reset link, when
 * the deployment revokes existing tokens on a reset (the default). The tokens plugin attaches here and
 * makes the person's identity tokens issued before `before` answer `revoked`; a plugin that keeps other
 * tokens of persons attaches to revoke those (oauth2-authorize revokes the person's grants: refresh
 * tokens, codes, and the access tokens issued in them). A handler that throws rolls the reset
 * back, and the person's password stays as it was.
 *
 * @example
 * attach: [revokePersonTokens.attach({ run: ({ orgId, personId, before, tx }) => revokeRefreshTokens(tx, orgId, personId, before) })]
 */
export const revokePersonTokens = defineHook<PersonTokensRevocation, void>('revokePersonTokens');
