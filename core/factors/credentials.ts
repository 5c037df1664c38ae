import { defineHook } from '../contract/hooks.ts';
import type { Transaction } from '../ports/storage.ts';

/** One credential of a person, as GET /persons/{id}/credentials lists it. Times in milliseconds. */
export interface PersonCredential {
  credentialId: string;
  /** The factor it serves: `password`, `webauthn`, `totp`. */
  type: string;
  name?: string;
  createdAt: number;
  lastUsedAt?: number;
  /** Whether it can sign the person in on its own (a password, a passkey): what the last-factor rule counts. */
  firstFactor: boolean;
  /** Whether it can be the second step (a confirmed TOTP, a passkey). */
  secondFactor: boolean;
}

/**
 * Each factor plugin lists the person's credentials it keeps (unconfirmed enrolments left out). The
 * credentials API, the last-factor rule and the second step read the union. With `tx`, listed in the
 * caller's transaction (the last-factor rule reads them there, under its lock, before it deletes).
 *
 * @example attach: [personCredentials.attach({ run: ({ orgId, personId }) => store.list(orgId, personId) })]
 */
export const personCredentials = defineHook<
  { orgId: string; personId: string; tx?: Transaction },
  PersonCredential[]
>('personCredentials');

/**
 * Deletes one credential of a person, in `tx`: the plugin that keeps `credentialId` deletes it and
 * answers what it deleted; the others answer undefined.
 */
export const deletePersonCredential = defineHook<
  { orgId: string; personId: string; credentialId: string; tx: Transaction },
  PersonCredential | undefined
>('deletePersonCredential');
