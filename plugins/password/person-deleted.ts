import { and, eq } from 'drizzle-orm';
import { beforePersonDeleted } from '../../core/persons/before-person-deleted.ts';
import { passwordCredentials } from './schema.ts';

/** A deleted person's password goes with it, in the deleting transaction. */
export const deleteCredentialOfDeletedPerson = beforePersonDeleted.attach({
  async run({ orgId, personId, tx }) {
    await tx.db
      .delete(passwordCredentials)
      .where(and(eq(passwordCredentials.orgId, orgId), eq(passwordCredentials.personId, personId)));
  },
});
