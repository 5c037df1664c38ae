import { and, eq, isNull } from 'drizzle-orm';
import { batchingFor, createGroupCommit } from '../../../core/batching/group-commit.ts';
import { prepared } from '../../../core/db/prepared.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import type { GrantFamily, IssuedAccess } from '../../oauth2/grants/index.ts';
import type { ClaimsRequest } from '../authorize/oidc-params.ts';
import { oauth2AuthorizeFamilies, oauth2AuthorizeRefreshTokens } from '../schema.ts';
import { claimsAsked } from '../tokens/person-claims.ts';
import { digest, scopeList, scopeText } from './digest.ts';
import { grantedAmong, recordGranted } from './family-locks.ts';

/** A grant to a client on behalf of a person, as a refresh sees it: what the grants declare. */
export type Family = GrantFamily;

/** A refresh token presented, with its family. */
export interface FoundRefresh {
  tokenHash: string;
  family: Family;
  /** Milliseconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
  /**
   * When it stopped being good: used, or superseded (another token of its generation was used); for a
   * token superseded before the family's last move, 0: long ago, whatever the grace window.
   */
  spentAt: number | undefined;
  /** The generation it was issued in. */
  generation: number;
  /** The family's `superseded_at` as it was before this token's spending: what unspend puts back. */
  supersededAt: number | undefined;
}

/**
 * The hot statement of every refresh, as plain SQL: the query builder's UPDATE ... FROM returning both
 * tables cost three times the statement itself on PGlite (bench oauth2-refresh). Named, so Postgres
 * prepares it once per connection; a lookup by primary key plans the same whatever the table holds.
 *
 * It spends the token only if it is of the family's current generation, and moves the family on a
 * generation: every other token of the one it leaves (the other answers to a reuse within the grace
 * window) is spent from now on, so the family stays one chain. The token's row is locked before the
 * family's, as a person's deletion locks them.
 */
const spendStatement = prepared<SpentRow>(
  'oauth2_authorize_spend_refresh',
  `with spent as (
     update oauth2_authorize_refresh_tokens r set spent_at = $2
     from oauth2_authorize_families f
     where r.token_hash = $1 and r.spent_at is null and r.expires_at > $2
       and f.family_id = r.family_id and f.client_id = $3 and f.revoked_at is null
       and r.generation = f.generation
     returning r.token_hash, r.issued_at, r.expires_at, r.generation, f.family_id, f.org_id, f.client_id,
       f.person_id, f.scope, f.methods, f.resource, f.auth_time, f.superseded_at, f.claims, f.session_id,
       f.dpop_jkt
   ), moved as (
     update oauth2_authorize_families f set generation = f.generation + 1, superseded_at = $2
     from spent where f.family_id = spent.family_id
     returning f.family_id
   )
   select spent.* from spent join moved on moved.family_id = spent.family_id`,
);

/** What spendFresh's statement answers (bigint columns may come back as strings, by driver). */
interface SpentRow {
  token_hash: string;
  issued_at: number | string;
  expires_at: number | string;
  generation: number | string;
  family_id: string;
  org_id: string;
  client_id: string;
  person_id: string;
  scope: string;
  methods: string;
  resource: string | null;
  auth_time: number | string;
  superseded_at: number | string | null;
  claims: string | null;
  session_id: string | null;
  dpop_jkt: string | null;
}

/** The userinfo members of a stored `claims` parameter. */
export const userinfoClaimsOf = (stored: string | null): string[] =>
  stored ? claimsAsked(JSON.parse(stored) as ClaimsRequest, 'userinfo') : [];

const familyOf = (row: typeof oauth2AuthorizeFamilies.$inferSelect): Family => ({
  familyId: row.familyId,
  orgId: row.orgId,
  clientId: row.clientId,
  personId: row.personId,
  scope: scopeList(row.scope),
  methods: scopeList(row.methods),
  resource: row.resource ?? undefined,
  authTime: row.authTime,
  revoked: row.revokedAt !== null,
  sessionId: row.sessionId ?? undefined,
  userinfoClaims: userinfoClaimsOf(row.claims),
  dpopJkt: row.dpopJkt ?? undefined,
});

/** Token families and their refresh tokens: rotation and spending (revocation: revokeGrants). */
export function createFamilyStore(deps: { storage: Storage; clock: Clock }) {
  const { storage, clock } = deps;
  const f = oauth2AuthorizeFamilies;
  const r = oauth2AuthorizeRefreshTokens;
  const inserts = createGroupCommit<typeof r.$inferInsert, boolean>({
    storage,
    transaction: false,
    ...batchingFor(storage),
    async write(tx, rows) {
      const granted = await recordGranted(tx, rows);
      return rows.map((row) => granted.has(row.familyId));
    },
  });

  return {
    async findFamily(familyId: string): Promise<Family | undefined> {
      const [row] = await storage.db.select().from(f).where(eq(f.familyId, familyId)).limit(1);
      return row ? familyOf(row) : undefined;
    },

    /** Begins a family: a grant to the client for the person (the mint API's; a code begins its own). */
    async begin(o: Omit<Family, 'familyId' | 'revoked' | 'dpopJkt'>): Promise<string> {
      const familyId = crypto.randomUUID();
      await storage.db.insert(f).values({
        familyId,
        orgId: o.orgId,
        clientId: o.clientId,
        personId: o.personId,
        scope: scopeText(o.scope),
        methods: scopeText(o.methods),
        resource: o.resource ?? null,
        authTime: o.authTime,
        createdAt: clock.now(),
      });
      return familyId;
    },

    /**
     * Whether the family is still granted (there, and not revoked), read after something was recorded
     * in it: a revocation committing at that moment is waited for (grantedAmong), so it is either seen
     * here or it saw the record.
     */
    async stillGranted(familyId: string): Promise<boolean> {
      return (await grantedAmong(storage, [familyId])).has(familyId);
    },

    /** Binds the family's refresh tokens to a DPoP key, unless a key is bound already. */
    async bindKey(familyId: string, jkt: string): Promise<void> {
      await storage.db
        .update(f)
        .set({ dpopJkt: jkt })
        .where(and(eq(f.familyId, familyId), isNull(f.dpopJkt)));
    },

    /**
     * Records an access token issued in the family without a refresh token, so that revoking the
     * family revokes it too. It takes a refresh-token row already spent, whose token nobody holds (the
     * digest of a secret thrown away): never presentable, kept as long as the access token lives.
     * Answers false when the family was revoked before the record could be seen by its revocation:
     * the caller revokes the access token and answers no tokens.
     */
    async recordAccess(familyId: string, access: IssuedAccess): Promise<boolean> {
      const now = clock.now();
      return inserts.add({
        tokenHash: await digest(crypto.randomUUID()),
        familyId,
        issuedAt: now,
        expiresAt: access.exp * 1000,
        spentAt: now,
        accessJti: access.jti,
        accessExp: access.exp,
      });
    },

    /**
     * Records a new refresh token of the family, with the access token issued beside it. Concurrent
     * refreshes share one INSERT (group commit): the token is stored once this resolves. Answers
     * false as recordAccess does.
     */
    async addRefresh(
      familyId: string,
      token: string,
      lifetimeMs: number,
      access: IssuedAccess,
    ): Promise<boolean> {
      const now = clock.now();
      return inserts.add({
        tokenHash: await digest(token),
        familyId,
        issuedAt: now,
        expiresAt: now + lifetimeMs,
        accessJti: access.jti,
        accessExp: access.exp,
      });
    },

    /** The refresh token and its family, or undefined when this service never issued it (or forgot it). */
    async findRefresh(token: string): Promise<FoundRefresh | undefined> {
      const [row] = await storage.db
        .select()
        .from(r)
        .innerJoin(f, eq(f.familyId, r.familyId))
        .where(eq(r.tokenHash, await digest(token)))
        .limit(1);
      if (!row) return undefined;
      const t = row.oauth2_authorize_refresh_tokens;
      const fam = row.oauth2_authorize_families;
      // Unspent, but of an older generation: another token of its generation was used since.
      const superseded =
        t.generation >= fam.generation
          ? undefined
          : t.generation === fam.generation - 1
            ? fam.supersededAt
            : 0;
      return {
        tokenHash: t.tokenHash,
        family: familyOf(fam),
        issuedAt: t.issuedAt,
        expiresAt: t.expiresAt,
        spentAt: t.spentAt ?? superseded ?? undefined,
        generation: t.generation,
        supersededAt: fam.supersededAt ?? undefined,
      };
    },

    /**
     * The common case in one statement: spends the token if it is unspent, unexpired, of this client
     * and of a family not revoked, and answers it with its family. Undefined otherwise (the caller
     * looks again to say why, or for the grace window). Of two refreshes racing, exactly one spends it.
     */
    async spendFresh(token: string, clientId: string): Promise<FoundRefresh | undefined> {
      const now = clock.now();
      const [row] = await spendStatement(storage.db, await digest(token), now, clientId);
      if (!row) return undefined;
      return {
        tokenHash: row.token_hash,
        family: {
          familyId: row.family_id,
          orgId: row.org_id,
          clientId: row.client_id,
          personId: row.person_id,
          scope: scopeList(row.scope),
          methods: scopeList(row.methods),
          resource: row.resource ?? undefined,
          authTime: Number(row.auth_time),
          revoked: false,
          sessionId: row.session_id ?? undefined,
          userinfoClaims: userinfoClaimsOf(row.claims),
          dpopJkt: row.dpop_jkt ?? undefined,
        },
        issuedAt: Number(row.issued_at),
        expiresAt: Number(row.expires_at),
        spentAt: undefined,
        generation: Number(row.generation),
        supersededAt: row.superseded_at === null ? undefined : Number(row.superseded_at),
      };
    },

    /**
     * Puts back a token spent by a refresh that was then refused (a scope it may not have), and its
     * family's generation, unless the family has moved on again since.
     */
    async unspend(found: FoundRefresh): Promise<void> {
      await storage.db.update(r).set({ spentAt: null }).where(eq(r.tokenHash, found.tokenHash));
      await storage.db
        .update(f)
        .set({ generation: found.generation, supersededAt: found.supersededAt ?? null })
        .where(and(eq(f.familyId, found.family.familyId), eq(f.generation, found.generation + 1)));
    },

    /**
     * Spends a refresh token (as of `at`, for one superseded then): one statement marks it only if it is
     * unspent, so of two refreshes racing exactly one wins; the loser reads when it was spent (for the
     * grace window).
     */
    async spend(tokenHash: string, at?: number): Promise<{ won: true } | { won: false; spentAt: number }> {
      const now = clock.now();
      const rows = await storage.db
        .update(r)
        .set({ spentAt: at ?? now })
        .where(and(eq(r.tokenHash, tokenHash), isNull(r.spentAt)))
        .returning({ h: r.tokenHash });
      if (rows.length === 1) return { won: true };
      const [row] = await storage.db.select({ spentAt: r.spentAt }).from(r).where(eq(r.tokenHash, tokenHash));
      return { won: false, spentAt: row?.spentAt ?? now };
    },
  };
}

export type FamilyStore = ReturnType<typeof createFamilyStore>;
