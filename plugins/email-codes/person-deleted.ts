import { and, eq } from 'drizzle-orm';
import { beforePersonDeleted } from '../../core/persons/before-person-deleted.ts';
import { emailChallenges } from './schema.ts';

/**
 * A deleted person's challenges go with them, in the deleting transaction. The plugin keeps no
 * credential (an email address is a handle of the person): it lists nothing through
 * `personCredentials`, so the factors plugin's last-first-factor rule does not count addresses.
 */
export const deleteChallengesOfDeletedPerson = beforePersonDeleted.attach({
  async run({ orgId, personId, tx }) {
    await tx.db
      .delete(emailChallenges)
      .where(and(eq(emailChallenges.orgId, orgId), eq(emailChallenges.personId, personId)));
  },
});
