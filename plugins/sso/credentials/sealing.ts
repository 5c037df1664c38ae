import type { SealedColumn } from '../../../core/db/reseal.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';

type Part = 'client_secret' | 'secret_options';

/** Bound to the organization and the credential: a sealed value copied to another row does not open. */
const contextOf = (orgId: string, id: string, part: Part) => `sso-credential:${orgId}:${id}:${part}`;

const column = (part: Part): SealedColumn => ({
  name: `sso_credentials.${part}`,
  table: 'sso_credentials',
  keys: ['org_id', 'id'],
  column: part,
  context: (row) => contextOf(row.org_id!, row.id!, part),
});

/** The sealed columns, for `secrets reseal`. */
export const ssoSealed: SealedColumn[] = [column('client_secret'), column('secret_options')];

/** Seals and opens a credential's write-only values; recent openings are remembered by their sealed text. */
export function createCredentialSealer(secrets: SecretBox, limit = 4096) {
  const opened = new Map<string, string>();
  const open = async (orgId: string, id: string, part: Part, sealed: string) => {
    const key = `${orgId}\n${id}\n${part}\n${sealed}`;
    const hit = opened.get(key);
    if (hit !== undefined) return hit;
    const plain = await secrets.open(sealed, contextOf(orgId, id, part));
    if (opened.size >= limit) opened.clear();
    opened.set(key, plain);
    return plain;
  };
  return {
    sealSecret: (orgId: string, id: string, secret: string) =>
      secrets.seal(secret, contextOf(orgId, id, 'client_secret')),
    sealOptions: (orgId: string, id: string, values: Record<string, unknown> | null) =>
      values === null
        ? Promise.resolve(null)
        : secrets.seal(JSON.stringify(values), contextOf(orgId, id, 'secret_options')),
    openSecret: (orgId: string, id: string, sealed: string) => open(orgId, id, 'client_secret', sealed),
    async openOptions(
      orgId: string,
      id: string,
      sealed: string | null,
    ): Promise<Record<string, unknown> | null> {
      if (sealed === null) return null;
      return JSON.parse(await open(orgId, id, 'secret_options', sealed)) as Record<string, unknown>;
    },
  };
}

export type CredentialSealer = ReturnType<typeof createCredentialSealer>;
