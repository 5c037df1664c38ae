import {
  deletePersonCredential,
  type PersonCredential,
  personCredentials,
} from '../../../core/factors/credentials.ts';
import type { ResetTokens } from '../reset/tokens.ts';
import type { CredentialStore } from './credentials.ts';

/** The credential_id of a person's password: a person has at most one, replaced in place. */
export const PASSWORD_CREDENTIAL_ID = 'password';

/** The password as GET /persons/{id}/credentials lists it: created_at is when the current one was set. */
const listed = (setAt: number): PersonCredential => ({
  credentialId: PASSWORD_CREDENTIAL_ID,
  type: 'password',
  createdAt: setAt,
  firstFactor: true,
  secondFactor: false,
});

/**
 * The password among the person's credentials (personCredentials), and its deletion through the
 * credentials API (deletePersonCredential), which voids the person's open reset links with it: a
 * deleted password is not set again by a link sent before.
 */
export function passwordCredentialHooks(deps: { credentials: CredentialStore; resetTokens: ResetTokens }) {
  return [
    personCredentials.attach({
      async run({ orgId, personId, tx }) {
        const setAt = await deps.credentials.setAt(orgId, personId, tx);
        return setAt === undefined ? [] : [listed(setAt)];
      },
    }),
    deletePersonCredential.attach({
      match: ({ credentialId }) => credentialId === PASSWORD_CREDENTIAL_ID,
      async run({ orgId, personId, tx }) {
        const setAt = await deps.credentials.deleteIn(tx, orgId, personId);
        if (setAt === undefined) return undefined;
        await deps.resetTokens.voidFor(tx, orgId, personId);
        return listed(setAt);
      },
    }),
  ];
}
