/**
 * The owner under which the Signer keeps the deployment's identity-token keys: the nil UUID, which no
 * organization has (organization IDs are UUIDv7). The Signer's table has no foreign key to
 * organizations, so the token keys live beside organizations' webhook keys, sealed by the SecretBox,
 * rotated (`keys rotate --tokens`) and resealed the same way.
 */
export const TOKEN_KEYS_OWNER = '00000000-0000-0000-0000-000000000000';
