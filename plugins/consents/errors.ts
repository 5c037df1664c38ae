import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the consents plugin: stable, machine-readable, each with one HTTP status. */
export const ConsentErrors = defineErrors({
  /** A consent level, a list or a path parameter breaks its rule; the message names which. */
  INVALID_CONSENT_INPUT: { status: 400, message: detail },
  /** No person of that ID in this organization (another organization's person included). */
  PERSON_NOT_FOUND: {
    status: 404,
    message: (id: string) => `no person ${JSON.stringify(id)} in this organization`,
  },
});

export type ConsentErrorCode = ErrorCodeOf<typeof ConsentErrors>;
