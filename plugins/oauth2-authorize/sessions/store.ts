import { and, eq, getTableColumns, inArray, lt, or, type SQL, sql } from 'drizzle-orm';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { oauth2AuthorizeSessionClients, oauth2AuthorizeSessions } from '../schema.ts';
import { digest } from '../store/digest.ts';

/** One factor of a sign-in: its method (the reference's FactorMethod), when, and the handle it used. */
export interface SessionFactor {
  method: string;
  /** Seconds since the epoch. */
  at: number;
  /** The handle typed or the provider's address, for the token_minted hook's authentications. */
  handle: { type: string; value: string };
}

/** A sign-in session as stored. Times are milliseconds since the epoch, but `authTime` (seconds). */
export interface SignInSession {
  sessionId: string;
  orgId: string;
  personId: string;
  factors: SessionFactor[];
  authTime: number;
  createdAt: number;
  /** The last use recorded: less than TOUCH_INTERVAL_MS before the last use. */
  lastSeenAt: number;
  /** The absolute end. */
  expiresAt: number;
  /** When it ends unless used before: the last use plus the idle lifetime, never past `expiresAt`. */
  idleExpiresAt: number;
  userAgent: string | undefined;
  ipAddress: string | undefined;
}

/** A session with the clients it served: what ending it tells. */
export interface EndedSession extends SignInSession {
  clients: string[];
}

/** A live session as a browser's cookie found it, with the clients it has served so far. */
export interface FoundSession extends SignInSession {
  clients: string[];
}

/**
 * How stale `last_seen_at` may get: an authorization writes it only once it is this old (or with a
 * client the session had not served). A use left unwritten is less than this after a written one, so
 * the idle end it would have set is at most this much later than the one stored: a session ends no
 * later than OAUTH2_SESSION_IDLE_SECONDS after its last use, and no earlier than that less one minute.
 * OAUTH2_SESSION_IDLE_SECONDS is at least 300 s (options.ts), so a session is alive at every use
 * within its idle window, and each use keeps it alive for at least four fifths of the window after it
 * (of the default three days, all but a minute). The two writes on every authorization were 2 of
 * its 12 statements on PGlite (the profile of scripts/bench/sessions.ts's silent authorization).
 */
export const TOUCH_INTERVAL_MS = 60_000;

export interface SessionLifetimes {
  /** Milliseconds a session lives without being used. */
  idleMs: number;
  /** Milliseconds a session lives at most. */
  absoluteMs: number;
}

const t = oauth2AuthorizeSessions;
const sc = oauth2AuthorizeSessionClients;

/**
 * Sign-in sessions: started by a sign-in in the hosted login, found by the digest of the browser's
 * cookie, used by every authorization of the organization until they end (logout, a lifetime, the
 * person disabled, deleted or reset). Rows are the truth on every replica: nothing is cached.
 */
export function createSessionStore(deps: { storage: Storage; clock: Clock; lifetimes: SessionLifetimes }) {
  const { storage, clock, lifetimes } = deps;

  const sessionOf = (row: typeof t.$inferSelect): SignInSession => ({
    sessionId: row.sessionId,
    orgId: row.orgId,
    personId: row.personId,
    factors: JSON.parse(row.factors) as SessionFactor[],
    authTime: row.authTime,
    createdAt: row.createdAt,
    lastSeenAt: row.lastSeenAt,
    expiresAt: row.expiresAt,
    idleExpiresAt: Math.min(row.expiresAt, row.lastSeenAt + lifetimes.idleMs),
    userAgent: row.userAgent ?? undefined,
    ipAddress: row.ipAddress ?? undefined,
  });

  const live = (s: SignInSession, now: number) => s.expiresAt > now && s.idleExpiresAt > now;

  /**
   * Renews the idle lifetime and records the client, in one statement: the session's update is a WITH
   * of the client's upsert (`last_at`: its last use, as `last_seen_at`, to the minute).
   */
  async function recordUse(sessionId: string, clientId: string, now: number): Promise<void> {
    const touched = storage.db.$with('touched').as(
      storage.db
        .update(t)
        .set({ lastSeenAt: sql`greatest(${t.lastSeenAt}, ${now})` })
        .where(eq(t.sessionId, sessionId))
        .returning({ sessionId: t.sessionId }),
    );
    await storage.db
      .with(touched)
      .insert(sc)
      .values({ sessionId, clientId, firstAt: now, lastAt: now })
      .onConflictDoUpdate({ target: [sc.sessionId, sc.clientId], set: { lastAt: now } });
  }

  /** Deletes sessions (and their clients' rows) matching `where`, answering them with their clients. */
  async function endWhere(db: Transaction['db'], where: SQL | undefined): Promise<EndedSession[]> {
    const rows = await db.delete(t).where(where).returning();
    if (!rows.length) return [];
    const ids = rows.map((r) => r.sessionId);
    const served = await db
      .delete(sc)
      .where(inArray(sc.sessionId, ids))
      .returning({ sessionId: sc.sessionId, clientId: sc.clientId });
    return rows.map((row) => ({
      ...sessionOf(row),
      clients: served.filter((c) => c.sessionId === row.sessionId).map((c) => c.clientId),
    }));
  }

  const inTx = <T>(tx: Transaction | undefined, run: (db: Transaction['db']) => Promise<T>) =>
    tx ? run(tx.db) : storage.transaction((inner) => run(inner.db));

  return {
    /** Starts a session; `secret` is the cookie's value (only its digest is stored). */
    async start(o: {
      sessionId: string;
      secret: string;
      orgId: string;
      personId: string;
      factors: SessionFactor[];
      authTime: number;
      userAgent?: string | undefined;
      ipAddress?: string | undefined;
    }): Promise<SignInSession> {
      const now = clock.now();
      const [row] = await storage.db
        .insert(t)
        .values({
          sessionId: o.sessionId,
          secretHash: await digest(o.secret),
          orgId: o.orgId,
          personId: o.personId,
          factors: JSON.stringify(o.factors),
          authTime: o.authTime,
          createdAt: now,
          lastSeenAt: now,
          expiresAt: now + lifetimes.absoluteMs,
          userAgent: o.userAgent?.slice(0, 512) ?? null,
          ipAddress: o.ipAddress ?? null,
        })
        .returning();
      return sessionOf(row!);
    },

    /**
     * The live session of this organization the cookie's value names, with the clients it served (read
     * in the same statement); undefined when there is none, it ended, or it belongs to another
     * organization (a cookie copied across is no session here).
     */
    async find(orgId: string, secret: string): Promise<FoundSession | undefined> {
      const [row] = await storage.db
        .select({
          ...getTableColumns(t),
          clients: sql<
            string[] | string
          >`coalesce((select json_agg(${sc.clientId}) from ${sc} where ${sc.sessionId} = ${t.sessionId}), '[]'::json)`,
        })
        .from(t)
        .where(eq(t.secretHash, await digest(secret)))
        .limit(1);
      if (!row || row.orgId !== orgId) return undefined;
      const { clients, ...columns } = row;
      const session = sessionOf(columns);
      // json, or its text on drivers that leave json unparsed.
      const served = typeof clients === 'string' ? (JSON.parse(clients) as string[]) : clients;
      return live(session, clock.now()) ? { ...session, clients: served } : undefined;
    },

    /** The live session with this ID, of this organization. */
    async get(orgId: string, sessionId: string): Promise<SignInSession | undefined> {
      const [row] = await storage.db
        .select()
        .from(t)
        .where(and(eq(t.orgId, orgId), eq(t.sessionId, sessionId)))
        .limit(1);
      const session = row && sessionOf(row);
      return session && live(session, clock.now()) ? session : undefined;
    },

    /**
     * Records a new authentication of the session's person (prompt=login, max_age): its factors and time,
     * and a new cookie value (`secret`): a value known before a sign-in is never the one after it.
     */
    async reauthenticated(
      sessionId: string,
      secret: string,
      factors: SessionFactor[],
      authTime: number,
    ): Promise<void> {
      await storage.db
        .update(t)
        .set({
          secretHash: await digest(secret),
          factors: JSON.stringify(factors),
          authTime,
          lastSeenAt: clock.now(),
        })
        .where(eq(t.sessionId, sessionId));
    },

    /** Records that the session served a client, and renews its idle lifetime. */
    served(sessionId: string, clientId: string): Promise<void> {
      return recordUse(sessionId, clientId, clock.now());
    },

    /**
     * Records an authorization a session `find` answered: as `served`, but nothing is written when the
     * session has served the client already and was last seen less than TOUCH_INTERVAL_MS ago. Every
     * client it serves is recorded before the code goes out, so a logout still reaches each of them.
     */
    async used(session: FoundSession, clientId: string): Promise<void> {
      const now = clock.now();
      if (session.clients.includes(clientId) && now - session.lastSeenAt < TOUCH_INTERVAL_MS) return;
      await recordUse(session.sessionId, clientId, now);
    },

    /** The clients a session served. */
    async clients(sessionId: string): Promise<string[]> {
      const rows = await storage.db
        .select({ clientId: sc.clientId })
        .from(sc)
        .where(eq(sc.sessionId, sessionId));
      return rows.map((r) => r.clientId);
    },

    /** The person's live sessions, newest first. */
    async list(orgId: string, personId: string): Promise<(SignInSession & { clients: string[] })[]> {
      const rows = await storage.db
        .select()
        .from(t)
        .where(and(eq(t.orgId, orgId), eq(t.personId, personId)));
      const now = clock.now();
      const sessions = rows
        .map(sessionOf)
        .filter((s) => live(s, now))
        .sort((a, b) => b.createdAt - a.createdAt);
      if (!sessions.length) return [];
      const served = await storage.db
        .select({ sessionId: sc.sessionId, clientId: sc.clientId })
        .from(sc)
        .where(
          inArray(
            sc.sessionId,
            sessions.map((s) => s.sessionId),
          ),
        );
      return sessions.map((s) => ({
        ...s,
        clients: served.filter((c) => c.sessionId === s.sessionId).map((c) => c.clientId),
      }));
    },

    /** Ends one session of the organization; answers it (with its clients) when it was there. */
    async end(orgId: string, sessionId: string, tx?: Transaction): Promise<EndedSession | undefined> {
      const [ended] = await inTx(tx, (db) =>
        endWhere(db, and(eq(t.orgId, orgId), eq(t.sessionId, sessionId))),
      );
      return ended;
    },

    /** Ends every session of a person, in `tx` when given. */
    endAll(orgId: string, personId: string, tx?: Transaction): Promise<EndedSession[]> {
      return inTx(tx, (db) => endWhere(db, and(eq(t.orgId, orgId), eq(t.personId, personId))));
    },

    /** Ends the sessions whose lifetimes ran out by `now` (the sweeper's work). */
    endExpired(tx?: Transaction): Promise<EndedSession[]> {
      const now = clock.now();
      return inTx(tx, (db) =>
        endWhere(db, or(lt(t.expiresAt, now), lt(t.lastSeenAt, now - lifetimes.idleMs))),
      );
    },
  };
}

export type SessionStore = ReturnType<typeof createSessionStore>;
