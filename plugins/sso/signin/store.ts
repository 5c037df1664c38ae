import { and, eq, isNotNull, isNull, lt } from 'drizzle-orm';
import { base64url, sha256 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { ssoSigninRedirectUris, ssoSigninStates } from './schema.ts';

/** What start records for its callback. */
export interface PendingSignIn {
  orgId: string;
  clientId: string;
  redirectUri: string;
  nonce: string;
  /** Empty for a provider without PKCE. */
  codeVerifier: string;
  appState: string;
  /** The binding of a sign-in started through the ssoAuthenticator capability; undefined for the application's. */
  binding?: string;
  /** The digest of the starting browser's cookie, for the application's sign-in (GET /sso/oidc/start). */
  browserHash?: string;
  /** The redirect URI sent to the provider: the credential's own callback. */
  callbackUrl?: string;
}

/** What the callback finds for a state. */
export type Burnt =
  | { kind: 'fresh'; pending: PendingSignIn }
  | { kind: 'replayed' | 'expired'; pending: PendingSignIn }
  | { kind: 'unknown' };

const hashOf = async (state: string) => base64url(await sha256(state));
const KEEP_USED_MS = 3_600_000;

/** Pending sign-ins (single-use, expiring) and the organizations' allowed redirect URIs. */
export function createSignInStore(deps: { storage: Storage; clock: Clock; stateTtlMs: number }) {
  const { storage, clock } = deps;
  const s = ssoSigninStates;
  const r = ssoSigninRedirectUris;
  const pendingOf = (row: typeof s.$inferSelect): PendingSignIn => ({
    orgId: row.orgId,
    clientId: row.clientId,
    redirectUri: row.redirectUri,
    nonce: row.nonce,
    codeVerifier: row.codeVerifier,
    appState: row.appState,
    ...(row.binding !== null ? { binding: row.binding } : {}),
    ...(row.browserHash !== null ? { browserHash: row.browserHash } : {}),
    ...(row.callbackUrl !== null ? { callbackUrl: row.callbackUrl } : {}),
  });

  return {
    async put(state: string, pending: PendingSignIn): Promise<void> {
      const now = clock.now();
      const stateHash = await hashOf(state);
      await storage.db.insert(s).values({ stateHash, ...pending, expiresAt: now + deps.stateTtlMs });
      // Old rows go with the writes that make more, so the table stays small without a worker.
      await storage.db.delete(s).where(lt(s.expiresAt, now - KEEP_USED_MS));
    },

    /**
     * Burns the state: one statement marks it used only if nobody has, so of two callbacks with the same
     * state exactly one gets `fresh`. A used state is `replayed`, a late one `expired`. `bound` says
     * which kind of sign-in the callback finishes: a state of the other kind is `unknown` and stays.
     */
    async burn(state: string, bound = false): Promise<Burnt> {
      const now = clock.now();
      const stateHash = await hashOf(state);
      const kind = bound ? isNotNull(s.binding) : isNull(s.binding);
      const [row] = await storage.db
        .update(s)
        .set({ usedAt: now })
        .where(and(eq(s.stateHash, stateHash), isNull(s.usedAt), kind))
        .returning();
      if (row) return { kind: row.expiresAt > now ? 'fresh' : 'expired', pending: pendingOf(row) };
      const [used] = await storage.db
        .select()
        .from(s)
        .where(and(eq(s.stateHash, stateHash), kind))
        .limit(1);
      return used ? { kind: 'replayed', pending: pendingOf(used) } : { kind: 'unknown' };
    },

    async redirectUris(orgId: string): Promise<string[]> {
      const rows = await storage.db.select({ uri: r.uri }).from(r).where(eq(r.orgId, orgId)).orderBy(r.uri);
      return rows.map((x) => x.uri);
    },

    async allows(orgId: string, uri: string): Promise<boolean> {
      const rows = await storage.db
        .select({ uri: r.uri })
        .from(r)
        .where(and(eq(r.orgId, orgId), eq(r.uri, uri)))
        .limit(1);
      return rows.length > 0;
    },

    /** Replaces the organization's list. */
    async setRedirectUris(orgId: string, uris: string[]): Promise<void> {
      await storage.transaction(async (tx) => {
        await tx.db.delete(r).where(eq(r.orgId, orgId));
        if (uris.length) await tx.db.insert(r).values([...new Set(uris)].map((uri) => ({ orgId, uri })));
      });
    },
  };
}

export type SignInStore = ReturnType<typeof createSignInStore>;
