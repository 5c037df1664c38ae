import { and, asc, eq, sql } from 'drizzle-orm';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { oauth2AuthorizeConsents } from '../schema.ts';
import { scopeList, scopeText } from '../store/digest.ts';

const c = oauth2AuthorizeConsents;

/** What a person allowed one client, as the API lists it. */
export interface OAuth2Consent {
  clientId: string;
  /** Sorted, without repeats. */
  scopes: string[];
  /** Milliseconds since the epoch: the first consent. */
  createdAt: number;
  /** Milliseconds since the epoch: the last one. */
  updatedAt: number;
}

/** The scopes without repeats or empty ones, sorted; a scope holding whitespace is a caller's bug. */
function canonical(scopes: readonly string[]): string[] {
  for (const s of scopes)
    if (/\s/.test(s)) throw new TypeError(`a scope cannot hold whitespace: ${JSON.stringify(s)}`);
  return [...new Set(scopes.filter((s) => s !== ''))].sort();
}

/**
 * The union of the row's scopes and the inserted ones, in the statement itself: two grants racing
 * (two tabs answering the page) both land, whichever commits first.
 */
const unionWithExcluded = sql`array_to_string(array(
  select s from unnest(string_to_array(${c.scopes} || ' ' || excluded.scopes, ' ')) as s
  where s <> '' group by s order by s collate "C"), ' ')`;

/**
 * The consents of the hosted login (OpenID Connect's, for clients with first_party false): per
 * organization, person and client, the scopes the person allowed. Not the GDPR consents of the
 * consents plugin.
 *
 * @example
 * const consents = createOAuth2ConsentStore({ storage, clock });
 * if (!(await consents.covers(orgId, personId, clientId, ['openid', 'email']))) showConsentPage();
 */
export function createOAuth2ConsentStore(deps: { storage: Storage; clock: Clock }) {
  const { storage, clock } = deps;
  const where = (orgId: string, personId: string, clientId?: string) =>
    clientId === undefined
      ? and(eq(c.orgId, orgId), eq(c.personId, personId))
      : and(eq(c.orgId, orgId), eq(c.personId, personId), eq(c.clientId, clientId));

  return {
    /**
     * Whether the person allowed the client every scope asked (true for none asked, once the client
     * was allowed anything). With `tx`, read in the caller's transaction.
     */
    async covers(
      orgId: string,
      personId: string,
      clientId: string,
      scopes: readonly string[],
      options?: { tx: Transaction },
    ): Promise<boolean> {
      const db = options?.tx.db ?? storage.db;
      const [row] = await db
        .select({ scopes: c.scopes })
        .from(c)
        .where(where(orgId, personId, clientId))
        .limit(1);
      if (!row) return false;
      const held = new Set(scopeList(row.scopes));
      return scopes.every((s) => held.has(s));
    },

    /**
     * Records that the person allowed the client these scopes, adding to those allowed before (never
     * narrowing them); updated_at is now. With `tx`, in the caller's transaction.
     */
    async grant(
      orgId: string,
      personId: string,
      clientId: string,
      scopes: readonly string[],
      options?: { tx: Transaction },
    ): Promise<void> {
      const db = options?.tx.db ?? storage.db;
      const now = clock.now();
      await db
        .insert(c)
        .values({
          orgId,
          personId,
          clientId,
          scopes: scopeText(canonical(scopes)),
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoUpdate({
          target: [c.orgId, c.personId, c.clientId],
          set: { scopes: unionWithExcluded, updatedAt: sql`excluded.updated_at` },
        });
    },

    /** The person's consents, oldest first. */
    async list(orgId: string, personId: string): Promise<OAuth2Consent[]> {
      const rows = await storage.db
        .select()
        .from(c)
        .where(where(orgId, personId))
        .orderBy(asc(c.createdAt), asc(c.clientId));
      return rows.map((r) => ({
        clientId: r.clientId,
        scopes: scopeList(r.scopes),
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
      }));
    },

    /**
     * Forgets the person's consent to one client, or to every client without `clientId`, and answers
     * the clients whose consent went (its length: how many). The grants the person holds for them are
     * not touched here: revokeOAuth2Consents does both.
     */
    async revoke(
      orgId: string,
      personId: string,
      clientId?: string,
      options?: { tx: Transaction },
    ): Promise<string[]> {
      const db = options?.tx.db ?? storage.db;
      const gone = await db
        .delete(c)
        .where(where(orgId, personId, clientId))
        .returning({ clientId: c.clientId });
      return gone.map((g) => g.clientId);
    },
  };
}

export type OAuth2ConsentStore = ReturnType<typeof createOAuth2ConsentStore>;
