import { and, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { SecondFactor } from '../../../core/factors/policy.ts';
import { base64url, randomSecret, sha256 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import type { TokenAuthentication } from '../../../core/tokens/before-token-issued.ts';
import { factorsMfaTokens } from '../schema.ts';

/** The prefix of an mfa_token, for secret scanners and readers of logs. */
const PREFIX = 'mfa_';

/** A second step waiting for its factor. */
export interface PendingSignIn {
  digest: string;
  orgId: string;
  personId: string;
  /** The first factor's authentication. */
  authentication: TokenAuthentication;
  methods: SecondFactor[];
  prevAnonymousPersonId?: string;
  expiresAt: number;
}

/**
 * The mfa_tokens: 256-bit random values given to the client once and stored only as their SHA-256
 * digests; bound to the organization, the person and the first factor's authentication; single use,
 * `ttlMs` long, void after `maxFailures` failed checks.
 */
export function createMfaTokens(deps: {
  storage: Storage;
  clock: Clock;
  ttlMs: number;
  maxFailures: number;
}) {
  const { storage, clock } = deps;
  const t = factorsMfaTokens;
  const digestOf = async (token: string) => base64url(await sha256(token));
  /** Open: not used, not expired, not void. */
  const open = (now: Date) => and(isNull(t.usedAt), gt(t.expiresAt, now), lt(t.failures, deps.maxFailures));

  return {
    /** A deleted person's open steps go with it, in the deleting transaction. */
    async forget(tx: Transaction, orgId: string, personId: string): Promise<void> {
      await tx.db.delete(t).where(and(eq(t.orgId, orgId), eq(t.personId, personId)));
    },

    /** Stores a new second step and answers its token (the only time it exists in clear). */
    async create(
      o: Omit<PendingSignIn, 'digest' | 'expiresAt'>,
    ): Promise<{ token: string; expiresAt: number }> {
      const token = randomSecret(PREFIX);
      const now = clock.now();
      const expiresAt = now + deps.ttlMs;
      await storage.transaction(async (tx) => {
        // The organization's finished and expired steps go on the way: the table holds only live ones.
        await tx.db.delete(t).where(and(eq(t.orgId, o.orgId), lt(t.expiresAt, new Date(now))));
        await tx.db.insert(t).values({
          digest: await digestOf(token),
          orgId: o.orgId,
          personId: o.personId,
          authentication: o.authentication,
          methods: o.methods,
          prevAnonymousPersonId: o.prevAnonymousPersonId ?? null,
          createdAt: new Date(now),
          expiresAt: new Date(expiresAt),
        });
      });
      return { token, expiresAt };
    },

    /** The open second step this token names for the organization; undefined for any other token. */
    async find(orgId: string, token: string): Promise<PendingSignIn | undefined> {
      if (!token.startsWith(PREFIX)) return undefined;
      const digest = await digestOf(token);
      const [row] = await storage.db
        .select()
        .from(t)
        .where(and(eq(t.digest, digest), eq(t.orgId, orgId), open(new Date(clock.now()))))
        .limit(1);
      if (!row) return undefined;
      return {
        digest,
        orgId: row.orgId,
        personId: row.personId,
        authentication: row.authentication,
        methods: row.methods,
        ...(row.prevAnonymousPersonId ? { prevAnonymousPersonId: row.prevAnonymousPersonId } : {}),
        expiresAt: row.expiresAt.getTime(),
      };
    },

    /** Counts a failed check against the step. */
    async fail(digest: string): Promise<void> {
      await storage.db
        .update(t)
        .set({ failures: sql`${t.failures} + 1` })
        .where(eq(t.digest, digest));
    },

    /** Uses the step up: true for the one caller that did, while it was open. */
    async consume(digest: string): Promise<boolean> {
      const now = new Date(clock.now());
      const used = await storage.db
        .update(t)
        .set({ usedAt: now })
        .where(and(eq(t.digest, digest), open(now)))
        .returning({ digest: t.digest });
      return used.length > 0;
    },
  };
}

export type MfaTokens = ReturnType<typeof createMfaTokens>;
