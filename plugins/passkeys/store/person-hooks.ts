import { and, eq } from 'drizzle-orm';
import { deletePersonCredential, personCredentials } from '../../../core/factors/credentials.ts';
import { isUuid } from '../../../core/ids.ts';
import { beforePersonDeleted } from '../../../core/persons/before-person-deleted.ts';
import { passkeyChallenges, passkeyCredentials, passkeyOfferDeclines } from '../schema.ts';
import { type PasskeyStore, personCredentialOf } from './credentials.ts';

/**
 * The passkeys in the credentials API (listed; one deleted by its credential_id in the caller's
 * transaction), and a deleted person's passkeys, open challenges and offer declines gone with the person.
 */
export function personHooks(passkeys: PasskeyStore) {
  return [
    personCredentials.attach({
      run: async ({ orgId, personId, tx }) =>
        (await passkeys.list(orgId, personId, tx)).map(personCredentialOf),
    }),
    deletePersonCredential.attach({
      // Another factor's credential ID need not be a UUID: it is simply not one of these.
      match: ({ credentialId }) => isUuid(credentialId),
      run: async ({ orgId, personId, credentialId, tx }) => {
        const gone = await passkeys.deleteIn(tx, orgId, personId, credentialId);
        return gone ? personCredentialOf(gone) : undefined;
      },
    }),
    beforePersonDeleted.attach({
      async run({ orgId, personId, tx }) {
        await tx.db
          .delete(passkeyCredentials)
          .where(and(eq(passkeyCredentials.orgId, orgId), eq(passkeyCredentials.personId, personId)));
        await tx.db
          .delete(passkeyChallenges)
          .where(and(eq(passkeyChallenges.orgId, orgId), eq(passkeyChallenges.personId, personId)));
        await tx.db
          .delete(passkeyOfferDeclines)
          .where(and(eq(passkeyOfferDeclines.orgId, orgId), eq(passkeyOfferDeclines.personId, personId)));
      },
    }),
  ];
}
