import type { Signer } from '../../../core/ports/signer.ts';

import { TOKEN_KEYS_OWNER } from '../../../core/tokens/token-keys.ts';

export { TOKEN_KEYS_OWNER };

/** The deployment's token keys: the Signer's keys of TOKEN_KEYS_OWNER. */
export const tokenKeys = (signer: Signer) => ({
  /** Signs with the current token key; `typ` JWT (identity and ID tokens) unless told (`logout+jwt`). */
  sign: (claims: Parameters<Signer['sign']>[1], typ = 'JWT') =>
    signer.sign(TOKEN_KEYS_OWNER, claims, { typ }),
  jwks: () => signer.jwks(TOKEN_KEYS_OWNER),
  rotate: () => signer.rotate(TOKEN_KEYS_OWNER),
  verify: (jwt: string) => signer.verify(TOKEN_KEYS_OWNER, jwt),
});

export type TokenKeys = ReturnType<typeof tokenKeys>;
