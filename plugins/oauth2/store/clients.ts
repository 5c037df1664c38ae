import { and, asc, eq, inArray, lt } from 'drizzle-orm';
import type { OAuthClientUiConfiguration } from '../../../core/capabilities/oauth2-server.ts';
import type { SealedColumn } from '../../../core/db/reseal.ts';
import { uuidv7 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { newClientSecret, secretDigest } from '../clients/secrets.ts';
import { OAuth2Errors } from '../errors.ts';
import { type ClientRow, oauth2Clients, oauth2RevokedTokens } from '../schema.ts';

/** A client's settings after validation; `undefined` leaves a field as it is (PATCH), null resets a duration. */
export interface ClientInput {
  name?: string;
  grantTypes?: string[];
  redirectUris?: string[];
  scopes?: string[];
  resources?: string[];
  postLogoutRedirectUris?: string[];
  /** null removes it. */
  backchannelLogoutUri?: string | null;
  backchannelLogoutSessionRequired?: boolean;
  firstParty?: boolean;
  organizationIssuer?: boolean;
  accessTokenDuration?: number | null;
  refreshTokenDuration?: number | null;
  /** null: its type's default. */
  tokenEndpointAuthMethod?: string | null;
  /** null removes them (jwks, jwksUri and the RFC 7591 descriptive members alike). */
  jwks?: { keys: Record<string, unknown>[] } | null;
  jwksUri?: string | null;
  clientUri?: string | null;
  logoUri?: string | null;
  policyUri?: string | null;
  tosUri?: string | null;
  contacts?: string[];
  softwareId?: string | null;
  softwareVersion?: string | null;
  /** RFC 9126 §6: its authorization requests must be pushed first. */
  requirePushedAuthorizationRequests?: boolean;
  /** RFC 9449 §5.2 `dpop_bound_access_tokens`. */
  dpopBoundAccessTokens?: boolean;
}

/** The SecretBox context of a client_secret_jwt client's sealed secret: a sealed value moves to no other row. */
export const clientSecretContext = (clientId: string) => `oauth2-client-secret:${clientId}`;

/** client_secret_jwt clients' sealed secrets, for `secrets reseal`. */
export const clientSecretsSealed: SealedColumn = {
  name: 'oauth2_clients.secret_sealed',
  table: 'oauth2_clients',
  keys: ['client_id'],
  column: 'secret_sealed',
  context: (row) => clientSecretContext(row.client_id!),
};

/** The RFC 7591 members of an input, as columns: only those given. */
function metadataColumns(input: ClientInput): Partial<typeof oauth2Clients.$inferInsert> {
  const set: Partial<typeof oauth2Clients.$inferInsert> = {};
  if (input.tokenEndpointAuthMethod !== undefined)
    set.tokenEndpointAuthMethod = input.tokenEndpointAuthMethod;
  if (input.jwks !== undefined) set.jwks = input.jwks;
  if (input.jwksUri !== undefined) set.jwksUri = input.jwksUri;
  if (input.clientUri !== undefined) set.clientUri = input.clientUri;
  if (input.logoUri !== undefined) set.logoUri = input.logoUri;
  if (input.policyUri !== undefined) set.policyUri = input.policyUri;
  if (input.tosUri !== undefined) set.tosUri = input.tosUri;
  if (input.contacts !== undefined) set.contacts = input.contacts;
  if (input.softwareId !== undefined) set.softwareId = input.softwareId;
  if (input.softwareVersion !== undefined) set.softwareVersion = input.softwareVersion;
  if (input.requirePushedAuthorizationRequests !== undefined)
    set.requirePushedAuthorizationRequests = input.requirePushedAuthorizationRequests;
  if (input.dpopBoundAccessTokens !== undefined) set.dpopBoundAccessTokens = input.dpopBoundAccessTokens;
  return set;
}

/** OAuth 2.0 clients and revoked access tokens. Admin reads and writes are scoped to one organization. */
export function createClientStore(deps: { storage: Storage; clock: Clock; secrets: SecretBox }) {
  const { storage, clock, secrets } = deps;
  /** A client_secret_jwt client keeps its secret sealed (it is the HMAC key); others keep none. */
  const sealedFor = (clientId: string, method: string | null | undefined, secret: string | undefined) =>
    method === 'client_secret_jwt' && secret !== undefined
      ? secrets.seal(secret, clientSecretContext(clientId))
      : null;
  const db = storage.db;
  const inOrg = (orgId: string, clientId: string) =>
    and(eq(oauth2Clients.orgId, orgId), eq(oauth2Clients.clientId, clientId));

  return {
    /**
     * Inserts a client; a confidential one gets a secret, answered once (only its digest is kept, and
     * for client_secret_jwt the secret sealed too), but a private_key_jwt one, which has its keys.
     */
    async create(
      orgId: string,
      input: Required<Pick<ClientInput, 'name' | 'grantTypes' | 'redirectUris' | 'scopes'>> &
        ClientInput & { public: boolean },
    ): Promise<{ row: ClientRow; secret?: string }> {
      const now = clock.now();
      // A private_key_jwt client proves itself with its keys: a secret would be one more thing to leak.
      const secret =
        input.public || input.tokenEndpointAuthMethod === 'private_key_jwt' ? undefined : newClientSecret();
      const clientId = uuidv7(now);
      const [row] = await db
        .insert(oauth2Clients)
        .values({
          clientId,
          orgId,
          name: input.name,
          public: input.public,
          grantTypes: input.grantTypes,
          redirectUris: input.redirectUris,
          scopes: input.scopes,
          resources: input.resources ?? [],
          postLogoutRedirectUris: input.postLogoutRedirectUris ?? [],
          backchannelLogoutUri: input.backchannelLogoutUri ?? null,
          backchannelLogoutSessionRequired: input.backchannelLogoutSessionRequired ?? false,
          firstParty: input.firstParty ?? true,
          organizationIssuer: input.organizationIssuer ?? false,
          accessTokenDuration: input.accessTokenDuration ?? null,
          refreshTokenDuration: input.refreshTokenDuration ?? null,
          secretDigest: secret === undefined ? null : await secretDigest(secret),
          secretSealed: await sealedFor(clientId, input.tokenEndpointAuthMethod, secret),
          ...metadataColumns(input),
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      return { row: row!, ...(secret !== undefined ? { secret } : {}) };
    },

    list(orgId: string): Promise<ClientRow[]> {
      return db
        .select()
        .from(oauth2Clients)
        .where(eq(oauth2Clients.orgId, orgId))
        .orderBy(asc(oauth2Clients.clientId));
    },

    /** The organization's client; another organization's (or a malformed ID) is a 404 like a missing one. */
    async get(orgId: string, clientId: string): Promise<ClientRow> {
      if (!isUuidText(clientId)) throw OAuth2Errors.CLIENT_NOT_FOUND(clientId);
      const [row] = await db.select().from(oauth2Clients).where(inOrg(orgId, clientId));
      if (!row) throw OAuth2Errors.CLIENT_NOT_FOUND(clientId);
      return row;
    },

    /** Clients by ID across organizations (the token endpoint's cache fills from here). */
    async findMany(clientIds: string[]): Promise<ClientRow[]> {
      const ids = clientIds.filter(isUuidText);
      if (ids.length === 0) return [];
      return db.select().from(oauth2Clients).where(inArray(oauth2Clients.clientId, ids));
    },

    async update(row: ClientRow, input: ClientInput): Promise<ClientRow> {
      const set: Partial<typeof oauth2Clients.$inferInsert> = { updatedAt: clock.now() };
      if (input.name !== undefined) set.name = input.name;
      if (input.grantTypes !== undefined) set.grantTypes = input.grantTypes;
      if (input.redirectUris !== undefined) set.redirectUris = input.redirectUris;
      if (input.scopes !== undefined) set.scopes = input.scopes;
      if (input.resources !== undefined) set.resources = input.resources;
      if (input.postLogoutRedirectUris !== undefined)
        set.postLogoutRedirectUris = input.postLogoutRedirectUris;
      if (input.backchannelLogoutUri !== undefined) set.backchannelLogoutUri = input.backchannelLogoutUri;
      if (input.backchannelLogoutSessionRequired !== undefined)
        set.backchannelLogoutSessionRequired = input.backchannelLogoutSessionRequired;
      if (input.firstParty !== undefined) set.firstParty = input.firstParty;
      if (input.organizationIssuer !== undefined) set.organizationIssuer = input.organizationIssuer;
      if (input.accessTokenDuration !== undefined) set.accessTokenDuration = input.accessTokenDuration;
      if (input.refreshTokenDuration !== undefined) set.refreshTokenDuration = input.refreshTokenDuration;
      Object.assign(set, metadataColumns(input));
      // Leaving client_secret_jwt, the sealed secret is no longer needed: only its digest stays.
      if (
        input.tokenEndpointAuthMethod !== undefined &&
        input.tokenEndpointAuthMethod !== 'client_secret_jwt'
      )
        set.secretSealed = null;
      const [updated] = await db
        .update(oauth2Clients)
        .set(set)
        .where(inOrg(row.orgId, row.clientId))
        .returning();
      if (!updated) throw OAuth2Errors.CLIENT_NOT_FOUND(row.clientId);
      return updated;
    },

    /** Replaces the client's hosted-UI configuration; answers it as stored. */
    async setUiConfiguration(
      row: ClientRow,
      configuration: OAuthClientUiConfiguration,
    ): Promise<OAuthClientUiConfiguration> {
      const [updated] = await db
        .update(oauth2Clients)
        .set({ uiConfiguration: configuration, updatedAt: clock.now() })
        .where(inOrg(row.orgId, row.clientId))
        .returning({ ui: oauth2Clients.uiConfiguration });
      if (!updated) throw OAuth2Errors.CLIENT_NOT_FOUND(row.clientId);
      return updated.ui ?? {};
    },

    /** Replaces a confidential client's secret: the old one stops working (after the cache, at once here). */
    async newSecret(row: ClientRow): Promise<string> {
      if (row.public) throw OAuth2Errors.PUBLIC_CLIENT_SECRET(row.clientId);
      if (row.tokenEndpointAuthMethod === 'private_key_jwt')
        throw OAuth2Errors.INVALID_CLIENT_SETTINGS(
          `client ${row.clientId} authenticates with private_key_jwt: it has no secret (change its token_endpoint_auth_method first to give it one)`,
        );
      const secret = newClientSecret();
      const updated = await db
        .update(oauth2Clients)
        .set({
          secretDigest: await secretDigest(secret),
          secretSealed: await sealedFor(row.clientId, row.tokenEndpointAuthMethod, secret),
          updatedAt: clock.now(),
        })
        .where(inOrg(row.orgId, row.clientId))
        .returning({ id: oauth2Clients.clientId });
      if (updated.length === 0) throw OAuth2Errors.CLIENT_NOT_FOUND(row.clientId);
      return secret;
    },

    async remove(orgId: string, clientId: string): Promise<void> {
      if (!isUuidText(clientId)) throw OAuth2Errors.CLIENT_NOT_FOUND(clientId);
      const rows = await db
        .delete(oauth2Clients)
        .where(inOrg(orgId, clientId))
        .returning({ id: oauth2Clients.clientId });
      if (rows.length === 0) throw OAuth2Errors.CLIENT_NOT_FOUND(clientId);
    },

    /** Records when clients were last used (one statement for all of them). */
    async touch(clientIds: string[], at: number): Promise<void> {
      if (clientIds.length === 0) return;
      await db
        .update(oauth2Clients)
        .set({ lastUsedAt: at })
        .where(inArray(oauth2Clients.clientId, clientIds));
    },

    /**
     * Records revoked access tokens until they expire (and sweeps expired records), in `tx` when given;
     * in rows of a thousand, as a statement holds at most 65,535 parameters.
     */
    async revoke(
      tokens: readonly { jti: string; orgId: string; clientId: string; exp: number }[],
      tx?: Transaction,
    ): Promise<void> {
      if (tokens.length === 0) return;
      const now = clock.now();
      const write = async (t: Transaction) => {
        for (let i = 0; i < tokens.length; i += REVOKED_ROWS_PER_INSERT)
          await t.db
            .insert(oauth2RevokedTokens)
            .values(
              tokens.slice(i, i + REVOKED_ROWS_PER_INSERT).map((token) => ({
                jti: token.jti,
                orgId: token.orgId,
                clientId: token.clientId,
                expiresAt: token.exp * 1000,
                revokedAt: now,
              })),
            )
            .onConflictDoNothing();
        await t.db.delete(oauth2RevokedTokens).where(lt(oauth2RevokedTokens.expiresAt, now));
      };
      await (tx ? write(tx) : storage.transaction(write));
    },

    /** Which of these jtis are revoked. */
    async findRevoked(jtis: string[]): Promise<Set<string>> {
      const ids = jtis.filter(isUuidText);
      if (ids.length === 0) return new Set();
      const rows = await db
        .select({ jti: oauth2RevokedTokens.jti })
        .from(oauth2RevokedTokens)
        .where(inArray(oauth2RevokedTokens.jti, ids));
      return new Set(rows.map((r) => r.jti));
    },
  };
}

const REVOKED_ROWS_PER_INSERT = 1000;

/** Client IDs and jtis are UUIDs; anything else names no row (and must not reach a uuid column). */
const isUuidText = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(s);

export type ClientStore = ReturnType<typeof createClientStore>;
