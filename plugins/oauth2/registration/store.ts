import { and, asc, count, eq, gt, sql } from 'drizzle-orm';
import { randomSecret, sha256, toHex, uuidv7 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import {
  oauth2RegisteredClients,
  oauth2RegistrationPolicies,
  oauth2RegistrationTokens,
  type RegistrationTokenRow,
  type StoredRegistrationPolicy,
} from './tables.ts';

/** The SHA-256 of a token, hex: what is stored and looked up, never the token. */
export const tokenDigest = async (token: string): Promise<string> => toHex(await sha256(token));

/** An organization that never set a policy: no open registration. */
export const DEFAULT_REGISTRATION_POLICY: StoredRegistrationPolicy = {
  open_registration: false,
  max_open_clients: 100,
  per_address_per_hour: 10,
  allowed_scopes: ['openid'],
};

/**
 * Initial access tokens, registration access tokens and registration policies. Tokens are `oit_` (initial)
 * and `ort_` (registration access) with 256 random bits; the prefixes let secret scanners find leaks.
 */
export function createRegistrationStore(deps: { storage: Storage; clock: Clock }) {
  const db = deps.storage.db;
  const tokens = oauth2RegistrationTokens;
  const registered = oauth2RegisteredClients;
  const policies = oauth2RegistrationPolicies;

  return {
    /** Issues an initial access token; the token itself is answered here only. */
    async issue(
      orgId: string,
      o: { expiresInSeconds: number; uses: number },
    ): Promise<{ row: RegistrationTokenRow; token: string }> {
      const now = deps.clock.now();
      const token = randomSecret('oit_');
      const [row] = await db
        .insert(tokens)
        .values({
          id: uuidv7(now),
          orgId,
          tokenDigest: await tokenDigest(token),
          uses: o.uses,
          usesLeft: o.uses,
          expiresAt: now + o.expiresInSeconds * 1000,
          createdAt: now,
        })
        .returning();
      return { row: row!, token };
    },

    /** The organization's initial access tokens, expired and used up ones included, oldest first. */
    list(orgId: string): Promise<RegistrationTokenRow[]> {
      return db.select().from(tokens).where(eq(tokens.orgId, orgId)).orderBy(asc(tokens.id));
    },

    /** Revokes one of the organization's tokens; false when it has none by that ID. */
    async revoke(orgId: string, id: string): Promise<boolean> {
      const rows = await db
        .delete(tokens)
        .where(and(eq(tokens.orgId, orgId), eq(tokens.id, id)))
        .returning({ id: tokens.id });
      return rows.length > 0;
    },

    /** The token's row while it can still register a client (not expired, a use left), else undefined. */
    async usable(token: string): Promise<RegistrationTokenRow | undefined> {
      const [row] = await db
        .select()
        .from(tokens)
        .where(
          and(
            eq(tokens.tokenDigest, await tokenDigest(token)),
            gt(tokens.usesLeft, 0),
            gt(tokens.expiresAt, deps.clock.now()),
          ),
        );
      return row;
    },

    /**
     * Takes one use of the token, in one conditional statement: of two registrations racing for its last
     * use, exactly one gets true.
     */
    async takeUse(id: string): Promise<boolean> {
      const rows = await db
        .update(tokens)
        .set({ usesLeft: sql`${tokens.usesLeft} - 1` })
        .where(and(eq(tokens.id, id), gt(tokens.usesLeft, 0), gt(tokens.expiresAt, deps.clock.now())))
        .returning({ id: tokens.id });
      return rows.length > 0;
    },

    /** Binds a new registration access token to a client just registered; answers the token. */
    async bind(clientId: string, orgId: string, open: boolean): Promise<string> {
      const token = randomSecret('ort_');
      await db.insert(registered).values({
        clientId,
        orgId,
        accessTokenDigest: await tokenDigest(token),
        open,
        createdAt: deps.clock.now(),
      });
      return token;
    },

    /** The client a registration access token is bound to, or undefined (unknown, or its client deleted). */
    async clientOf(token: string): Promise<{ clientId: string; orgId: string; open: boolean } | undefined> {
      const [row] = await db
        .select({ clientId: registered.clientId, orgId: registered.orgId, open: registered.open })
        .from(registered)
        .where(eq(registered.accessTokenDigest, await tokenDigest(token)));
      return row;
    },

    /** How many clients the organization has that open registration made. */
    async openClients(orgId: string): Promise<number> {
      const [row] = await db
        .select({ n: count() })
        .from(registered)
        .where(and(eq(registered.orgId, orgId), eq(registered.open, true)));
      return row?.n ?? 0;
    },

    /** The organization's registration policy; the default (open registration off) when never set. */
    async policy(orgId: string): Promise<StoredRegistrationPolicy> {
      const [row] = await db
        .select({ policy: policies.policy })
        .from(policies)
        .where(eq(policies.orgId, orgId));
      return row ? { ...DEFAULT_REGISTRATION_POLICY, ...row.policy } : DEFAULT_REGISTRATION_POLICY;
    },

    async setPolicy(orgId: string, policy: StoredRegistrationPolicy): Promise<StoredRegistrationPolicy> {
      const updatedAt = deps.clock.now();
      await db
        .insert(policies)
        .values({ orgId, policy, updatedAt })
        .onConflictDoUpdate({ target: policies.orgId, set: { policy, updatedAt } });
      return policy;
    },
  };
}

export type RegistrationStore = ReturnType<typeof createRegistrationStore>;
