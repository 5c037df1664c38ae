import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import {
  bigint,
  boolean,
  index,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import * as v from 'valibot';
import { HANDLE_TYPES } from '../../core/capabilities/person-directory.ts';
import { uuidString } from '../../core/ids.ts';

/**
 * A person's passkeys (WebAuthn credentials). `credential_id` is the service's stable name for one (the
 * credentials API's); `webauthn_id` is the authenticator's credential ID (base64url), unique in an
 * organization only, so that another organization registering the same ID blocks nobody. The public
 * key is public (COSE, base64url); the sign counter and the backup flags are kept as the last
 * ceremony reported them. Times are milliseconds since the epoch.
 */
export const passkeyCredentials = pgTable(
  'passkey_credentials',
  {
    credentialId: uuid('credential_id').primaryKey(),
    orgId: uuid('org_id').notNull(),
    personId: text('person_id').notNull(),
    webauthnId: text('webauthn_id').notNull(),
    publicKey: text('public_key').notNull(),
    counter: bigint('counter', { mode: 'number' }).notNull(),
    transports: jsonb('transports').$type<string[]>().notNull().default([]),
    /** Backup eligible: a multi-device credential (a synced passkey). */
    backupEligible: boolean('backup_eligible').notNull(),
    backedUp: boolean('backed_up').notNull(),
    aaguid: text('aaguid').notNull(),
    name: text('name').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    lastUsedAt: bigint('last_used_at', { mode: 'number' }),
  },
  (t) => [
    uniqueIndex('passkey_credentials_webauthn_idx').on(t.orgId, t.webauthnId),
    index('passkey_credentials_person_idx').on(t.orgId, t.personId),
  ],
);

/**
 * Open WebAuthn challenges: single use (a ceremony deletes its row before verifying), short-lived,
 * bound to the organization and to what they were made for. `purpose` is `registration` (bound to the
 * person), `sign_in` (bound to the person a handle named when one was sent: `for_handle`, with
 * `person_id` null when the handle names nobody) or `second_factor` (bound to the person of the
 * mfa_token).
 */
export const passkeyChallenges = pgTable(
  'passkey_challenges',
  {
    challengeId: uuid('challenge_id').primaryKey(),
    orgId: uuid('org_id').notNull(),
    purpose: text('purpose').notNull(),
    personId: text('person_id'),
    forHandle: boolean('for_handle').notNull().default(false),
    challenge: text('challenge').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    index('passkey_challenges_expires_idx').on(t.expiresAt),
    index('passkey_challenges_person_idx').on(t.orgId, t.personId),
  ],
);

/**
 * The persons who answered the hosted login's "Add a passkey?" with "Not now", and when: the offer is
 * not made again to them for a while (OFFER_DECLINE_MS), on any browser. Deleted with the person.
 */
export const passkeyOfferDeclines = pgTable(
  'passkey_offer_declines',
  {
    orgId: uuid('org_id').notNull(),
    personId: text('person_id').notNull(),
    declinedAt: bigint('declined_at', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.personId] })],
);

// ---- bodies --------------------------------------------------------------------------------------

const b64url = (max: number) =>
  v.pipe(
    v.string('must be a string'),
    v.maxLength(max, `must be at most ${max} characters`),
    v.regex(/^[A-Za-z0-9_-]*$/, 'must be base64url without padding'),
  );
const nonEmptyB64url = (max: number) => v.pipe(b64url(max), v.minLength(1, 'must not be empty'));

const credentialCommon = {
  id: nonEmptyB64url(1366),
  rawId: nonEmptyB64url(1366),
  type: v.literal('public-key', "must be 'public-key'"),
  authenticatorAttachment: v.optional(
    v.picklist(['platform', 'cross-platform'], 'must be platform or cross-platform'),
  ),
  clientExtensionResults: v.optional(v.record(v.string(), v.unknown(), 'must be an object')),
};

/** A RegistrationResponseJSON, as the browser's `credential.toJSON()` writes it. */
export const RegistrationResponse = v.object(
  {
    ...credentialCommon,
    response: v.object(
      {
        clientDataJSON: nonEmptyB64url(4096),
        attestationObject: nonEmptyB64url(32768),
        transports: v.optional(
          v.pipe(
            v.array(v.pipe(v.string('must be a string'), v.maxLength(32)), 'must be an array'),
            v.maxLength(8),
          ),
        ),
      },
      'must be an object',
    ),
  },
  'must be an object',
);

/** An AuthenticationResponseJSON, as the browser's `credential.toJSON()` writes it. */
export const AuthenticationResponse = v.object(
  {
    ...credentialCommon,
    response: v.object(
      {
        clientDataJSON: nonEmptyB64url(4096),
        authenticatorData: nonEmptyB64url(4096),
        signature: nonEmptyB64url(8192),
        userHandle: v.optional(b64url(128)),
      },
      'must be an object',
    ),
  },
  'must be an object',
);

export const PersonParams = v.object({ person_id: v.pipe(v.string(), v.maxLength(128)) });

const challengeId = uuidString('must be a challenge_id from the options route (a UUID)');

export const RegisterBody = v.object({
  challenge_id: challengeId,
  response: RegistrationResponse,
  name: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.trim(),
      v.minLength(1, 'must not be empty'),
      v.maxLength(64, 'must be at most 64 characters'),
    ),
  ),
});

export const SignInOptionsBody = v.optional(
  v.object({
    handle: v.optional(
      v.object({
        type: v.picklist(HANDLE_TYPES, `must be one of ${HANDLE_TYPES.join(', ')}`),
        value: v.pipe(
          v.string('must be a string'),
          v.minLength(1, 'must not be empty'),
          v.maxLength(320, 'must be at most 320 characters'),
        ),
      }),
    ),
  }),
);

export const SignInBody = v.object({ challenge_id: challengeId, response: AuthenticationResponse });

/** The second step's own members of POST /authenticate/mfa (method webauthn). */
export const SecondFactorInput = SignInBody;

export const MfaOptionsBody = v.object({
  mfa_token: v.pipe(
    v.string('must be a string'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(512, 'must be at most 512 characters'),
  ),
});

// ---- answers -------------------------------------------------------------------------------------

const isObject = (x: unknown) => typeof x === 'object' && x !== null;
export const CreationOptionsResult = v.object({
  result: v.object({
    challenge_id: v.string(),
    options: v.pipe(
      v.custom<PublicKeyCredentialCreationOptionsJSON>(isObject),
      v.description('WebAuthn PublicKeyCredentialCreationOptionsJSON'),
    ),
  }),
});
export const RequestOptionsResult = v.object({
  result: v.object({
    challenge_id: v.string(),
    options: v.pipe(
      v.custom<PublicKeyCredentialRequestOptionsJSON>(isObject),
      v.description('WebAuthn PublicKeyCredentialRequestOptionsJSON'),
    ),
  }),
});
export const RegisteredResult = v.object({
  result: v.object({
    credential_id: v.string(),
    type: v.literal('webauthn'),
    name: v.string(),
    created_at: v.string(),
  }),
});
export const SignInResult = v.object({
  result: v.union([
    v.object({ token: v.string(), person_id: v.string() }),
    v.object({
      person_id: v.string(),
      mfa_required: v.literal(true),
      mfa_token: v.string(),
      methods: v.array(v.string()),
    }),
  ]),
});
