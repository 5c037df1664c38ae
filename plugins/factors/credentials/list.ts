import type { Hooks } from '../../../core/contract/hooks.ts';
import { type PersonCredential, personCredentials } from '../../../core/factors/credentials.ts';

/** The union of the person's credentials every factor plugin lists, oldest first. */
export async function credentialsOf(
  hooks: Hooks,
  orgId: string,
  personId: string,
): Promise<PersonCredential[]> {
  const lists = await hooks.run(personCredentials, { orgId, personId });
  return lists
    .flat()
    .sort((a, b) => a.createdAt - b.createdAt || a.credentialId.localeCompare(b.credentialId));
}
