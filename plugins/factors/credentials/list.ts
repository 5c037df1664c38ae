import type { Hooks } from '../../../core/contract/hooks.ts';
import { type PersonCredential, personCredentials } from '../../../core/factors/credentials.ts';
import type { Transaction } from '../../../core/ports/storage.ts';

/** The union of the person's credentials every factor plugin lists, oldest first. */
export async function credentialsOf(
  hooks: Hooks,
  orgId: string,
  personId: string,
  tx?: Transaction,
): Promise<PersonCredential[]> {
  const lists = await hooks.run(personCredentials, { orgId, personId, ...(tx ? { tx } : {}) });
  return lists
    .flat()
    .sort((a, b) => a.createdAt - b.createdAt || a.credentialId.localeCompare(b.credentialId));
}
