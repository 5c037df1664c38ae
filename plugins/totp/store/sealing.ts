import type { SealedColumn } from '../../../core/db/reseal.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';

/** Bound to the row: a sealed secret copied to another credential does not open. */
const contextOf = (credentialId: string) => `totp-credential:${credentialId}:secret`;

/** The sealed column, for `secrets reseal`. */
export const totpSealed: SealedColumn = {
  name: 'totp_credentials.secret',
  table: 'totp_credentials',
  keys: ['id'],
  column: 'secret',
  context: (row) => contextOf(row.id!),
};

/** Seals and opens authenticator secrets. */
export function createSecretSealer(secrets: SecretBox) {
  return {
    seal: (credentialId: string, secret: string) => secrets.seal(secret, contextOf(credentialId)),
    open: (credentialId: string, sealed: string) => secrets.open(sealed, contextOf(credentialId)),
  };
}

export type SecretSealer = ReturnType<typeof createSecretSealer>;
