import { bigint, boolean, jsonb, pgTable, primaryKey, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import * as v from 'valibot';
import { exactObject, unchangeable } from '../../core/http/validation.ts';

/**
 * An organization's OIDC provider credentials. The API names a credential by its client ID, so a client
 * ID is unique in the organization (the index answers concurrent creates too); `id` binds the sealed
 * values to this row, so a sealed value copied to another credential does not open.
 */
export const ssoCredentials = pgTable(
  'sso_credentials',
  {
    orgId: uuid('org_id').notNull(),
    id: uuid('id').notNull(),
    /**
     * Names the credential in its redirect URIs (`/sso/oidc/callback/{callback_id}`): random, unique
     * across organizations (two may register the same provider client ID) and stable for the
     * credential's life, so a provider's answer comes back to the one credential that asked for it.
     */
    callbackId: uuid('callback_id').notNull().defaultRandom(),
    clientId: text('client_id').notNull(),
    provider: text('provider').notNull(),
    label: text('label').notNull().default(''),
    externalCredId: text('external_cred_id').notNull().default(''),
    enableInAuthzServer: boolean('enable_in_authz_server').notNull().default(false),
    /** The configured authorize_scopes; null: the provider's defaults. */
    authorizeScopes: jsonb('authorize_scopes').$type<string[]>(),
    /** The provider's options as validated, without its write-only ones. */
    options: jsonb('options').$type<Record<string, unknown>>().notNull(),
    /** Sealed by the SecretBox (context `sso-credential:<org>:<id>:client_secret`). */
    clientSecret: text('client_secret').notNull(),
    /** JSON of the provider's write-only options (Apple's private_key), sealed; null when it has none. */
    secretOptions: text('secret_options'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ name: 'sso_credentials_pkey', columns: [t.orgId, t.id] }),
    uniqueIndex('sso_credentials_org_client_id_key').on(t.orgId, t.clientId),
    uniqueIndex('sso_credentials_callback_id_key').on(t.callbackId),
  ],
);

export type SsoCredentialRow = typeof ssoCredentials.$inferSelect;

// ---------------------------------------------------------------------------------------------------
// The API's shapes. `options` is checked by the handler against the provider's own schema, so its
// messages name the provider's option and rule.

/** Postgres text cannot hold U+0000. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it refuses
const noNul = v.regex(/^[^\u0000]*$/, 'must not contain the NUL character (\\u0000)');

const clientIdField = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(512, 'must be at most 512 characters'),
  v.regex(/^[\x21-\x7e]+$/, 'must be visible ASCII without spaces'),
);
const secretField = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(4096, 'must be at most 4096 characters'),
  noNul,
);
const labelField = v.pipe(
  v.string('must be a string'),
  v.maxLength(256, 'must be at most 256 characters'),
  noNul,
);
const externalField = v.pipe(
  v.string('must be a string'),
  v.maxLength(512, 'must be at most 512 characters'),
  noNul,
);

const OptionsDoc = v.pipe(
  v.record(v.string(), v.record(v.string(), v.unknown())),
  v.description(
    "One object per provider, keyed by provider id; only the credential's own provider. Each may hold authorize_scopes (array of scopes) and the provider's options (azuread.tenant, okta.organization_url, apple.private_key, team_id, key_id, secret_lifetime).",
  ),
);

/** The reference's deprecated name of external_cred_id: a vendor client may still send it. */
const externalAlias = v.optional(
  v.pipe(
    externalField,
    v.description('Deprecated: the old name of external_cred_id. Given with it, the two must agree.'),
    v.metadata({ deprecated: true }),
  ),
);
/** The reference's name of the flag (the vendor's product name where the spec says "service"). */
const flagAlias = v.optional(
  v.pipe(
    v.boolean('must be true or false'),
    v.description(
      "The reference's name of enable_in_service_oidc_authz_server. Given with it, the two must agree.",
    ),
  ),
);

export const CredentialCreateSchema = exactObject(
  {
    client_id: clientIdField,
    client_secret: v.pipe(secretField, v.description('Write-only: sealed at rest, never returned.')),
    provider: v.pipe(v.string('must be a string'), v.description('A provider registered in this deployment')),
    label: v.optional(labelField),
    external_cred_id: v.optional(externalField),
    external_cred: externalAlias,
    enable_in_service_oidc_authz_server: v.optional(v.boolean('must be true or false')),
    enable_in_slashid_oidc_authz_server: flagAlias,
    options: v.optional(v.unknown()),
  },
  'member',
);

export const CredentialPatchSchema = exactObject(
  {
    client_secret: v.optional(secretField),
    label: v.optional(labelField),
    external_cred_id: v.optional(externalField),
    external_cred: externalAlias,
    enable_in_service_oidc_authz_server: v.optional(v.boolean('must be true or false')),
    enable_in_slashid_oidc_authz_server: flagAlias,
    options: v.optional(v.unknown()),
    provider: unchangeable("it names the credential's provider; create a credential for another one"),
    client_id: unchangeable('it names the credential; create a credential with the new client ID'),
  },
  'member',
  { unlisted: ['provider', 'client_id'] },
);

export const CredentialSchema = v.object({
  client_id: v.string(),
  provider: v.string(),
  label: v.string(),
  external_cred_id: v.string(),
  enable_in_service_oidc_authz_server: v.boolean(),
  options: OptionsDoc,
  redirect_uri: v.pipe(
    v.string(),
    v.description(
      "Register this exact URI at the provider for SSO sign-in (GET /sso/oidc/start): the credential's own callback, `{PUBLIC_BASE_URL}/sso/oidc/callback/{callback_id}`. The provider's answer is refused at any other credential's callback.",
    ),
  ),
  hosted_login_redirect_uri: v.pipe(
    v.string(),
    v.description(
      "Register this exact URI at the provider too when enable_in_service_oidc_authz_server is true: the hosted login's callback for this credential, `{PUBLIC_BASE_URL}/oauth2/authorize/sso/callback/{callback_id}`.",
    ),
  ),
  effective_scopes: v.pipe(
    v.array(v.string()),
    v.description(
      'What a sign-in requests: authorize_scopes (or the defaults) and the always-requested scopes',
    ),
  ),
});

export const ClientIdParams = v.object({ oauth_client_id: v.string() });
export const ListQuery = exactObject({ oauth_provider: v.optional(v.string()) }, 'parameter');
