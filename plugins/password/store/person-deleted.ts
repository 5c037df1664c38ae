import { and, eq } from 'drizzle-orm';
import { beforePersonDeleted } from '../../../core/persons/before-person-deleted.ts';
import { passwordCredentials, passwordResetTokens } from '../schema.ts';

/** A deleted person's password and reset links go with it, in the deleting transaction. */
export const deleteCredentialOfDeletedPerson = beforePersonDeleted.attach({
  async run({ orgId, personId, tx }) {
    await tx.db
      .delete(passwordCredentials)
      .where(and(eq(passwordCredentials.orgId, orgId), eq(passwordCredentials.personId, personId)));
    await tx.db
      .delete(passwordResetTokens)
      .where(and(eq(passwordResetTokens.orgId, orgId), eq(passwordResetTokens.personId, personId)));
  },
});
