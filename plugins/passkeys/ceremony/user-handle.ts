import { base64url } from '../../../core/ids.ts';

/**
 * The WebAuthn user handle of a person: the UTF-8 bytes of the person ID (no personal data, at most 64
 * bytes as WebAuthn allows). The same for every passkey of the person, so an authenticator keeps one
 * discoverable credential per person and site, and an assertion's `userHandle` names whose it is.
 */
export const userHandleOf = (personId: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(personId);

/** The user handle as an assertion's `response.userHandle` carries it (base64url). */
export const userHandleText = (personId: string): string => base64url(userHandleOf(personId));
