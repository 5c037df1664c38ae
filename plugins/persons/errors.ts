import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the persons plugin: stable, machine-readable, each with one HTTP status. */
export const PersonErrors = defineErrors({
  /** A handle, region, group name, query parameter or setting breaks its rule. */
  INVALID_PERSON_INPUT: { status: 400, message: detail },
  /** No person of that ID in this organization (another organization's person included). */
  PERSON_NOT_FOUND: {
    status: 404,
    message: (id: string) => `no person ${JSON.stringify(id)} in this organization`,
  },
  /** No group of that name in this organization. */
  GROUP_NOT_FOUND: {
    status: 404,
    message: (name: string) => `no group ${JSON.stringify(name)} in this organization`,
  },
  /** The person is not in the group. */
  NOT_A_MEMBER: {
    status: 404,
    message: (id: string, name: string) => `person ${id} is not in group ${JSON.stringify(name)}`,
  },
  /** A handle already belongs to a person of this organization. */
  HANDLE_TAKEN: {
    status: 409,
    message: (where: string, type: string, value: string) =>
      `${where}: the ${type} ${JSON.stringify(value)} already belongs to a person of this organization`,
  },
  /** A request names a region, and a handle of it belongs to a person who lives in another. */
  REGION_CONFLICT: {
    status: 409,
    message: (where: string, handle: { type: string; value: string }, held: string, asked: string) =>
      `${where}: the ${handle.type} ${JSON.stringify(handle.value)} belongs to a person in region ${held}, not ${asked}; a person's region does not change (leave region out to update it)`,
  },
  /** A body names the same handle twice, or a PUT's handles belong to different persons. */
  HANDLE_CONFLICT: { status: 409, message: detail },
  /** The handle to verify is not the person's, or of a type no link can prove. */
  HANDLE_NOT_VERIFIABLE: { status: 400, message: detail },
  /** The handle is verified already: no link is sent. */
  HANDLE_ALREADY_VERIFIED: {
    status: 409,
    message: (value: string) => `body.handle: ${JSON.stringify(value)} is verified already; no link was sent`,
  },
  /** A verification link that verifies nothing: unknown, expired or used. */
  VERIFICATION_REFUSED: { status: 400, message: detail },
  /** The verification form was not sent by the page this browser opened. */
  VERIFICATION_FORM_FORBIDDEN: { status: 403, message: detail },
  /** Too many verification links for one person. */
  TOO_MANY_VERIFICATIONS: { status: 429, message: detail },
});

export type PersonErrorCode = ErrorCodeOf<typeof PersonErrors>;
