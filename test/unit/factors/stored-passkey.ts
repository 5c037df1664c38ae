import type { Storage } from '../../../core/ports/storage.ts';
import { passkeyCredentials } from '../../../plugins/passkeys/schema.ts';

/** Stores a passkey for the person as a registration would (the row only: no ceremony is needed here). */
export async function storedPasskey(storage: Storage, orgId: string, personId: string): Promise<string> {
  const credentialId = crypto.randomUUID();
  await storage.db.insert(passkeyCredentials).values({
    credentialId,
    orgId,
    personId,
    webauthnId: crypto.randomUUID().replaceAll('-', ''),
    publicKey: 'pQECAyYgASFYIA',
    counter: 0,
    backupEligible: false,
    backedUp: false,
    aaguid: '00000000-0000-0000-0000-000000000000',
    name: 'laptop',
    createdAt: Date.now(),
  });
  return credentialId;
}
