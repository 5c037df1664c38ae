import { and, eq, inArray } from 'drizzle-orm';
import { beforePersonDeleted } from '../../../core/persons/before-person-deleted.ts';
import {
  oauth2AuthorizeCodes,
  oauth2AuthorizeConsents,
  oauth2AuthorizeDevices,
  oauth2AuthorizeFamilies,
  oauth2AuthorizeRefreshTokens,
} from '../schema.ts';

/**
 * A deleted person's grants go with it, in the deleting transaction: its codes, token families and
 * refresh tokens (a refresh then answers invalid_grant; its access tokens expire on their own), and
 * the consents it gave clients, and the device authorizations it signed in.
 */
export const forgetDeletedPerson = beforePersonDeleted.attach({
  async run({ orgId, personId, tx }) {
    const f = oauth2AuthorizeFamilies;
    const families = tx.db
      .select({ id: f.familyId })
      .from(f)
      .where(and(eq(f.orgId, orgId), eq(f.personId, personId)));
    await tx.db
      .delete(oauth2AuthorizeRefreshTokens)
      .where(inArray(oauth2AuthorizeRefreshTokens.familyId, families));
    await tx.db
      .delete(oauth2AuthorizeCodes)
      .where(and(eq(oauth2AuthorizeCodes.orgId, orgId), eq(oauth2AuthorizeCodes.personId, personId)));
    await tx.db.delete(f).where(and(eq(f.orgId, orgId), eq(f.personId, personId)));
    const d = oauth2AuthorizeDevices;
    await tx.db.delete(d).where(and(eq(d.orgId, orgId), eq(d.personId, personId)));
    const c = oauth2AuthorizeConsents;
    await tx.db.delete(c).where(and(eq(c.orgId, orgId), eq(c.personId, personId)));
  },
});
