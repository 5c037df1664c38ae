import { defineHook } from '../contract/hooks.ts';
import type { Transaction } from '../ports/storage.ts';

/** A person made inactive, and the transaction that does it. */
export interface PersonDisabling {
  readonly orgId: string;
  readonly personId: string;
  /** The transaction that sets `active` false: write in it, so all goes or nothing does. */
  readonly tx: Transaction;
}

/**
 * Called by the persons plugin inside the transaction that sets a person's `active` to false (PATCH
 * /persons/{id}, PUT /persons), also when it was false already. Plugins that keep something alive for
 * a person end it here in `tx` (oauth2-authorize ends the person's sign-in sessions). A handler that
 * throws rolls the change back: the person stays as it was, and the caller gets the error.
 *
 * @example
 * attach: [personDisabled.attach({ run: ({ orgId, personId, tx }) => endSessionsOf(tx, orgId, personId) })]
 */
export const personDisabled = defineHook<PersonDisabling, void>('personDisabled');
