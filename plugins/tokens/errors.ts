import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the tokens plugin: stable, machine-readable, each with one HTTP status. */
export const TokenErrors = defineErrors({
  /** mint-token's custom_claims names a registered or reserved claim, or is not an object. */
  INVALID_CUSTOM_CLAIMS: { status: 400, message: detail },
  /** The token to revoke is not a valid token of this organization. */
  INVALID_TOKEN: { status: 400, message: detail },
  /**
   * A beforeTokenIssued handler (the token_minted hook) tried to set a registered or reserved claim:
   * the issuance is blocked, and the authentication fails with this reason.
   */
  HOOK_CLAIM_RESERVED: {
    status: 403,
    message: (claim: string) =>
      `token issuance blocked: the token_minted hook tried to set the claim ${JSON.stringify(claim)}, which is registered or reserved`,
  },
  /** The person is disabled: no token is issued for it, minted or otherwise, until it is enabled again. */
  PERSON_DISABLED: {
    status: 400,
    message: (id: string) =>
      `person_id: person ${JSON.stringify(id)} is disabled and gets no tokens (PATCH the person with "active": true first)`,
  },
  /** No person of this ID in the organization (or one of another organization). */
  PERSON_NOT_FOUND: {
    status: 404,
    message: (id: string) => `no person ${JSON.stringify(id)} in this organization`,
  },
});

export type TokenErrorCode = ErrorCodeOf<typeof TokenErrors>;
