import { and, asc, eq } from 'drizzle-orm';
import { isUuid, uuidv7 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { SsoErrors } from '../errors.ts';
import { type SsoCredentialRow, ssoCredentials } from '../schema.ts';
import type { CheckedOptions } from './options.ts';
import type { CredentialSealer } from './sealing.ts';

/** A credential's fields after validation; `undefined` leaves a field as it is (PATCH). */
export interface CredentialInput {
  clientSecret?: string;
  label?: string;
  externalCredId?: string;
  enableInAuthzServer?: boolean;
  options?: CheckedOptions;
}

/** Postgres said `unique_violation` somewhere in the error's cause chain (drizzle wraps driver errors). */
function isUniqueViolation(err: unknown): boolean {
  for (let e = err; e instanceof Object; e = (e as { cause?: unknown }).cause)
    if ((e as { code?: unknown }).code === '23505') return true;
  return false;
}

/** SSO provider credentials, always scoped to one organization. Secrets are sealed before they are written. */
export function createCredentialStore(deps: { storage: Storage; clock: Clock; sealer: CredentialSealer }) {
  const { storage, clock, sealer } = deps;
  const db = storage.db;
  const inOrg = (orgId: string, clientId: string) =>
    and(eq(ssoCredentials.orgId, orgId), eq(ssoCredentials.clientId, clientId));

  return {
    /** Inserts; a client ID the organization already has is a 409 (the unique index settles races). */
    async create(
      orgId: string,
      input: {
        clientId: string;
        provider: string;
        clientSecret: string;
        options: CheckedOptions;
      } & CredentialInput,
    ): Promise<SsoCredentialRow> {
      const id = uuidv7(clock.now());
      const now = clock.now();
      try {
        const [row] = await db
          .insert(ssoCredentials)
          .values({
            orgId,
            id,
            clientId: input.clientId,
            provider: input.provider,
            label: input.label ?? '',
            externalCredId: input.externalCredId ?? '',
            enableInAuthzServer: input.enableInAuthzServer ?? false,
            authorizeScopes: input.options.authorizeScopes,
            options: input.options.options,
            clientSecret: await sealer.sealSecret(orgId, id, input.clientSecret),
            secretOptions: await sealer.sealOptions(orgId, id, input.options.secrets),
            createdAt: now,
            updatedAt: now,
          })
          .returning();
        return row!;
      } catch (err) {
        if (isUniqueViolation(err)) throw SsoErrors.CLIENT_ID_TAKEN(input.clientId);
        throw err;
      }
    },

    list(orgId: string, provider?: string): Promise<SsoCredentialRow[]> {
      const where = provider
        ? and(eq(ssoCredentials.orgId, orgId), eq(ssoCredentials.provider, provider))
        : eq(ssoCredentials.orgId, orgId);
      return db.select().from(ssoCredentials).where(where).orderBy(asc(ssoCredentials.id));
    },

    /** The credential, or undefined (the capability's `open` answers undefined, the routes 404). */
    async find(orgId: string, clientId: string): Promise<SsoCredentialRow | undefined> {
      const [row] = await db.select().from(ssoCredentials).where(inOrg(orgId, clientId));
      return row;
    },

    /** The credential a redirect URI names by its callback ID, of any organization; undefined when none. */
    async findByCallback(callbackId: string): Promise<SsoCredentialRow | undefined> {
      if (!isUuid(callbackId)) return undefined;
      const [row] = await db
        .select()
        .from(ssoCredentials)
        .where(eq(ssoCredentials.callbackId, callbackId.toLowerCase()));
      return row;
    },

    async get(orgId: string, clientId: string): Promise<SsoCredentialRow> {
      const row = await this.find(orgId, clientId);
      if (!row) throw SsoErrors.CREDENTIAL_NOT_FOUND(clientId);
      return row;
    },

    async update(row: SsoCredentialRow, input: CredentialInput): Promise<SsoCredentialRow> {
      const set: Partial<typeof ssoCredentials.$inferInsert> = { updatedAt: clock.now() };
      if (input.label !== undefined) set.label = input.label;
      if (input.externalCredId !== undefined) set.externalCredId = input.externalCredId;
      if (input.enableInAuthzServer !== undefined) set.enableInAuthzServer = input.enableInAuthzServer;
      if (input.clientSecret !== undefined)
        set.clientSecret = await sealer.sealSecret(row.orgId, row.id, input.clientSecret);
      if (input.options) {
        set.authorizeScopes = input.options.authorizeScopes;
        set.options = input.options.options;
        set.secretOptions = await sealer.sealOptions(row.orgId, row.id, input.options.secrets);
      }
      const [updated] = await db
        .update(ssoCredentials)
        .set(set)
        .where(and(eq(ssoCredentials.orgId, row.orgId), eq(ssoCredentials.id, row.id)))
        .returning();
      if (!updated) throw SsoErrors.CREDENTIAL_NOT_FOUND(row.clientId);
      return updated;
    },

    async remove(orgId: string, clientId: string): Promise<void> {
      const rows = await db
        .delete(ssoCredentials)
        .where(inOrg(orgId, clientId))
        .returning({ id: ssoCredentials.id });
      if (rows.length === 0) throw SsoErrors.CREDENTIAL_NOT_FOUND(clientId);
    },

    /** The stored options, write-only ones opened: what a PATCH of options starts from. */
    async storedOptions(row: SsoCredentialRow): Promise<CheckedOptions> {
      return {
        authorizeScopes: row.authorizeScopes ?? null,
        options: row.options,
        secrets: await sealer.openOptions(row.orgId, row.id, row.secretOptions),
      };
    },
  };
}

export type CredentialStore = ReturnType<typeof createCredentialStore>;
