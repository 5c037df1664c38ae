import { defineHook } from '../contract/hooks.ts';
import type { Transaction } from '../ports/storage.ts';

/** A person about to be deleted, and the deletion's transaction. */
export interface PersonDeletion {
  readonly orgId: string;
  readonly personId: string;
  /** The transaction that deletes the person: write in it, so all goes or nothing does. */
  readonly tx: Transaction;
}

/**
 * Called by the persons plugin inside the transaction that deletes a person, before the person's row
 * goes. Plugins that keep rows about a person (a password credential, the first-token record) delete
 * them here in `tx`. A handler that throws rolls the whole deletion back: the person stays, and the
 * caller gets the error.
 *
 * @example
 * attach: [beforePersonDeleted.attach({ run: ({ orgId, personId, tx }) => deleteRowsOf(tx, orgId, personId) })]
 */
export const beforePersonDeleted = defineHook<PersonDeletion, void>('beforePersonDeleted');
