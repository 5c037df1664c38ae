import { and, eq, isNull } from 'drizzle-orm';
import type { Clock } from '../../../core/ports/clock.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import type { ClaimsRequest } from '../authorize/oidc-params.ts';
import { oauth2AuthorizeCodes, oauth2AuthorizeFamilies } from '../schema.ts';
import { digest, scopeList, scopeText } from './digest.ts';
import { userinfoClaimsOf } from './families.ts';

/** Codes live 60 s (RFC 6749 §4.1.2 recommends at most 10 minutes). */
export const CODE_TTL_MS = 60_000;

/** What a code was issued for. */
export interface IssuedCode {
  orgId: string;
  clientId: string;
  redirectUri: string;
  scope: string[];
  codeChallenge: string | undefined;
  /** The resource of the authorization request (RFC 8707); undefined: the organization's own audience. */
  resource: string | undefined;
  personId: string;
  methods: string[];
  /** Seconds since the epoch. */
  authTime: number;
  /** The ID token minted at the login. */
  idToken: string;
  /** The OIDC `claims` parameter of the request. */
  claims: ClaimsRequest | undefined;
  /** The sign-in session the code came from. */
  sessionId: string;
  /** The DPoP key the exchange must prove (RFC 9449 §10); undefined: none. */
  dpopJkt?: string | undefined;
}

export interface RedeemedCode extends Omit<IssuedCode, 'methods' | 'claims' | 'sessionId' | 'dpopJkt'> {
  userinfoClaims: string[];
  dpopJkt: string | undefined;
  codeHash: string;
  familyId: string;
}

/** What an exchange finds for a code. */
export type Burnt =
  | { kind: 'fresh'; code: RedeemedCode }
  | { kind: 'expired' }
  | { kind: 'replayed'; code: RedeemedCode; access?: { jti: string; exp: number } }
  | { kind: 'unknown' };

export const sealContext = (codeHash: string) => `oauth2-authorize:code:${codeHash}`;

/** Authorization codes: issued by the hosted login with their token family, burnt by the exchange. */
export function createCodeStore(deps: { storage: Storage; clock: Clock; secrets: SecretBox }) {
  const { storage, clock, secrets } = deps;
  const c = oauth2AuthorizeCodes;

  async function redeemed(row: typeof c.$inferSelect): Promise<RedeemedCode> {
    return {
      codeHash: row.codeHash,
      orgId: row.orgId,
      clientId: row.clientId,
      redirectUri: row.redirectUri,
      scope: scopeList(row.scope),
      codeChallenge: row.codeChallenge ?? undefined,
      resource: row.resource ?? undefined,
      personId: row.personId,
      authTime: row.authTime,
      familyId: row.familyId,
      idToken: await secrets.open(row.idToken, sealContext(row.codeHash)),
      userinfoClaims: userinfoClaimsOf(row.claims),
      dpopJkt: row.dpopJkt ?? undefined,
    };
  }

  return {
    /**
     * Records the code and the family its tokens will belong to, in one statement: the family's insert
     * is a WITH of the code's, so both are written or neither, without a transaction's own round trips
     * (on PGlite a transaction also holds the one connection from its BEGIN to its COMMIT).
     */
    async issue(code: string, issued: IssuedCode): Promise<void> {
      const codeHash = await digest(code);
      const familyId = crypto.randomUUID();
      const now = clock.now();
      const idToken = await secrets.seal(issued.idToken, sealContext(codeHash));
      const family = storage.db.$with('family').as(
        storage.db
          .insert(oauth2AuthorizeFamilies)
          .values({
            familyId,
            orgId: issued.orgId,
            clientId: issued.clientId,
            personId: issued.personId,
            scope: scopeText(issued.scope),
            methods: scopeText(issued.methods),
            resource: issued.resource ?? null,
            claims: issued.claims ? JSON.stringify(issued.claims) : null,
            sessionId: issued.sessionId,
            authTime: issued.authTime,
            createdAt: now,
          })
          .returning({ familyId: oauth2AuthorizeFamilies.familyId }),
      );
      await storage.db
        .with(family)
        .insert(c)
        .values({
          codeHash,
          orgId: issued.orgId,
          clientId: issued.clientId,
          redirectUri: issued.redirectUri,
          scope: scopeText(issued.scope),
          codeChallenge: issued.codeChallenge ?? null,
          resource: issued.resource ?? null,
          claims: issued.claims ? JSON.stringify(issued.claims) : null,
          personId: issued.personId,
          authTime: issued.authTime,
          familyId,
          idToken,
          dpopJkt: issued.dpopJkt ?? null,
          expiresAt: now + CODE_TTL_MS,
        });
    },

    /**
     * Burns the code: one statement marks it used only if nobody has, so of two exchanges of one code
     * exactly one gets `fresh`; the other sees `replayed`, with the access token the first recorded.
     */
    async burn(code: string): Promise<Burnt> {
      const now = clock.now();
      const codeHash = await digest(code);
      const [row] = await storage.db
        .update(c)
        .set({ usedAt: now })
        .where(and(eq(c.codeHash, codeHash), isNull(c.usedAt)))
        .returning();
      if (row)
        return row.expiresAt > now ? { kind: 'fresh', code: await redeemed(row) } : { kind: 'expired' };
      const [used] = await storage.db.select().from(c).where(eq(c.codeHash, codeHash)).limit(1);
      if (!used) return { kind: 'unknown' };
      return {
        kind: 'replayed',
        code: await redeemed(used),
        ...(used.accessJti && used.accessExp ? { access: { jti: used.accessJti, exp: used.accessExp } } : {}),
      };
    },

    /** Records the access token an exchange issued, for a replay to revoke. */
    async recordAccess(codeHash: string, access: { jti: string; exp: number }): Promise<void> {
      await storage.db
        .update(c)
        .set({ accessJti: access.jti, accessExp: access.exp })
        .where(eq(c.codeHash, codeHash));
    },
  };
}

export type CodeStore = ReturnType<typeof createCodeStore>;
