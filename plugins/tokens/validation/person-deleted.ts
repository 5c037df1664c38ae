import { and, eq } from 'drizzle-orm';
import { beforePersonDeleted } from '../../../core/persons/before-person-deleted.ts';
import { tokensIssuedPersons, tokensPersonCutoffs } from '../schema.ts';

/**
 * A deleted person's first-token record goes with it, in the deleting transaction. (Person IDs are not
 * reused, so it only ever mattered as data kept about a person who is gone.)
 */
export const forgetDeletedPerson = beforePersonDeleted.attach({
  async run({ orgId, personId, tx }) {
    await tx.db
      .delete(tokensIssuedPersons)
      .where(and(eq(tokensIssuedPersons.orgId, orgId), eq(tokensIssuedPersons.personId, personId)));
    await tx.db
      .delete(tokensPersonCutoffs)
      .where(and(eq(tokensPersonCutoffs.orgId, orgId), eq(tokensPersonCutoffs.personId, personId)));
  },
});
