import { and, eq, gt, lt, sql } from 'drizzle-orm';
import type { HandleType, PersonHandle } from '../../../core/capabilities/person-directory.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Database, Storage, Transaction } from '../../../core/ports/storage.ts';
import { type EmailMethod, emailChallenges } from '../schema.ts';

export type ChallengePurpose = 'sign_in' | 'second_factor';
export type ChallengeStatus = 'requested' | 'sent' | 'confirmed' | 'used' | 'exhausted';

/** A challenge as the routes read it. Times in clock milliseconds. */
export interface Challenge {
  digest: string;
  orgId: string;
  purpose: ChallengePurpose;
  method: EmailMethod;
  handle: PersonHandle;
  personId: string | null;
  secretDigest: string | null;
  status: ChallengeStatus;
  attempts: number;
  requestedIp: string | null;
  requestedUserAgent: string | null;
  /** The hosted login's binding (the digest of its login's ID), or null for the API's challenges. */
  boundTo: string | null;
  createdAt: number;
  expiresAt: number;
}

/** Settled and expired rows are kept this long (so a late answer says why), then swept. */
const KEEP_MS = 24 * 60 * 60 * 1000;
/** How often an organization's old rows are swept, at most, by one replica. */
const SWEEP_EVERY_MS = 60_000;

type Row = typeof emailChallenges.$inferSelect;

const toChallenge = (r: Row): Challenge => ({
  digest: r.challengeDigest,
  orgId: r.orgId,
  purpose: r.purpose as ChallengePurpose,
  method: r.method as EmailMethod,
  handle: { type: r.handleType as HandleType, value: r.handleValue },
  personId: r.personId,
  secretDigest: r.secretDigest,
  status: r.status as ChallengeStatus,
  attempts: r.attempts,
  requestedIp: r.requestedIp,
  requestedUserAgent: r.requestedUserAgent,
  boundTo: r.boundTo,
  createdAt: r.createdAt.getTime(),
  expiresAt: r.expiresAt.getTime(),
});

/**
 * The challenges of email sign-ins. Every change of state is one conditional update, so two racing
 * requests with one code or link give one success.
 */
export function createChallengeStore(deps: { storage: Storage; clock: Clock; ttlMs: number }) {
  const { storage, clock } = deps;
  const t = emailChallenges;
  const swept = new Map<string, number>();

  async function sweep(db: Database, orgId: string) {
    const now = clock.now();
    if (now - (swept.get(orgId) ?? 0) <= SWEEP_EVERY_MS) return;
    if (swept.size >= 10_000) swept.clear();
    swept.set(orgId, now);
    await db.delete(t).where(and(eq(t.orgId, orgId), lt(t.expiresAt, new Date(now - KEEP_MS))));
  }

  return {
    ttlMs: deps.ttlMs,
    expiresAt: () => clock.now() + deps.ttlMs,

    /** Stores a challenge (`requested`, or `sent` with its person and secret), in `tx`. */
    async insert(
      tx: Transaction,
      c: Pick<Challenge, 'digest' | 'orgId' | 'purpose' | 'method' | 'handle' | 'expiresAt'> & {
        status: 'requested' | 'sent';
        personId?: string;
        secretDigest?: string;
        requestedIp?: string | undefined;
        requestedUserAgent?: string | undefined;
        boundTo?: string | undefined;
      },
    ): Promise<void> {
      await tx.db.insert(t).values({
        challengeDigest: c.digest,
        orgId: c.orgId,
        purpose: c.purpose,
        method: c.method,
        handleType: c.handle.type,
        handleValue: c.handle.value,
        personId: c.personId ?? null,
        secretDigest: c.secretDigest ?? null,
        status: c.status,
        requestedIp: c.requestedIp ?? null,
        requestedUserAgent: c.requestedUserAgent?.slice(0, 512) ?? null,
        boundTo: c.boundTo ?? null,
        createdAt: new Date(clock.now()),
        expiresAt: new Date(c.expiresAt),
      });
      await sweep(tx.db, c.orgId);
    },

    /** A `requested` challenge's message is queued: its person and secret, in `tx`. False if it was already. */
    async markSent(
      tx: Transaction,
      digest: string,
      personId: string,
      secretDigest: string,
    ): Promise<boolean> {
      const done = await tx.db
        .update(t)
        .set({ personId, secretDigest, status: 'sent' })
        .where(and(eq(t.challengeDigest, digest), eq(t.status, 'requested')))
        .returning({ digest: t.challengeDigest });
      return done.length > 0;
    },

    /** The challenge of this digest in `orgId`, or undefined. */
    async find(orgId: string, digest: string): Promise<Challenge | undefined> {
      const [row] = await storage.db
        .select()
        .from(t)
        .where(and(eq(t.challengeDigest, digest), eq(t.orgId, orgId)))
        .limit(1);
      return row ? toChallenge(row) : undefined;
    },

    /** The email_link challenge a link's token digest names, in any organization (the page has no OrgID). */
    async findByLink(secretDigest: string): Promise<Challenge | undefined> {
      const [row] = await storage.db
        .select()
        .from(t)
        .where(and(eq(t.secretDigest, secretDigest), eq(t.method, 'email_link')))
        .limit(1);
      return row ? toChallenge(row) : undefined;
    },

    /**
     * Counts a wrong code; at `max` wrong codes the challenge is `exhausted` and takes no more. Answers
     * the count after this one (0 when the challenge was not open for codes any more).
     */
    async recordWrongCode(digest: string, max: number): Promise<number> {
      const [row] = await storage.db
        .update(t)
        .set({
          attempts: sql`${t.attempts} + 1`,
          status: sql`case when ${t.attempts} + 1 >= ${max} then 'exhausted' else ${t.status} end`,
        })
        .where(and(eq(t.challengeDigest, digest), sql`${t.status} in ('requested', 'sent')`))
        .returning({ attempts: t.attempts });
      return row?.attempts ?? 0;
    },

    /** The link's button was pressed: a `sent`, unexpired email_link challenge becomes `confirmed`. */
    async confirmLink(secretDigest: string): Promise<boolean> {
      const done = await storage.db
        .update(t)
        .set({ status: 'confirmed' })
        .where(
          and(
            eq(t.secretDigest, secretDigest),
            eq(t.method, 'email_link'),
            eq(t.status, 'sent'),
            gt(t.expiresAt, new Date(clock.now())),
          ),
        )
        .returning({ digest: t.challengeDigest });
      return done.length > 0;
    },

    /**
     * Uses the challenge in `tx` if it is still in `from` and unexpired: of two racing requests exactly
     * one gets true.
     */
    async consume(tx: Transaction, digest: string, from: 'sent' | 'confirmed'): Promise<boolean> {
      const now = new Date(clock.now());
      const used = await tx.db
        .update(t)
        .set({ status: 'used', settledAt: now })
        .where(and(eq(t.challengeDigest, digest), eq(t.status, from), gt(t.expiresAt, now)))
        .returning({ digest: t.challengeDigest });
      return used.length > 0;
    },

    /** A deleted person's challenges go with it, in the deleting transaction. */
    deleteForPerson: (tx: Transaction, orgId: string, personId: string) =>
      tx.db.delete(t).where(and(eq(t.orgId, orgId), eq(t.personId, personId))),
  };
}

export type ChallengeStore = ReturnType<typeof createChallengeStore>;
