import { and, eq, gt, isNull } from 'drizzle-orm';
import { randomSecret } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { oauth2AuthorizePushedRequests } from '../schema.ts';
import { digest } from './digest.ts';

/** RFC 9126 §2.2: the URN prefix of a request_uri this service answers. */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** What an authorization request finds for a request_uri and its client_id. */
export type FoundPushed =
  | { kind: 'open'; params: URLSearchParams }
  | { kind: 'unknown' | 'used' | 'expired' | 'other_client' };

/** The random part of a request_uri of ours; undefined for anything else (another server's, made up). */
const secretOf = (requestUri: string): string | undefined =>
  requestUri.startsWith(REQUEST_URI_PREFIX) && requestUri.length <= REQUEST_URI_PREFIX.length + 64
    ? requestUri.slice(REQUEST_URI_PREFIX.length)
    : undefined;

/**
 * Pushed authorization requests (RFC 9126), in the database so every replica finds them. The
 * request_uri carries 256 random bits; only their SHA-256 is stored, so the table holds nothing a
 * browser could present back.
 */
export function createPushedRequestStore(deps: { storage: Storage; clock: Clock; lifetimeMs: number }) {
  const { storage, clock, lifetimeMs } = deps;
  const t = oauth2AuthorizePushedRequests;

  return {
    /** Stores checked parameters (client_id among them) for the client; answers the request_uri. */
    async push(orgId: string, clientId: string, params: URLSearchParams): Promise<string> {
      const secret = randomSecret('');
      await storage.db.insert(t).values({
        requestHash: await digest(secret),
        orgId,
        clientId,
        params: JSON.stringify([...params]),
        expiresAt: clock.now() + lifetimeMs,
      });
      return `${REQUEST_URI_PREFIX}${secret}`;
    },

    /**
     * The pushed request's parameters, if it is still good for this client, without using it up: what
     * is checked before the request is burnt. Why not, otherwise.
     */
    async find(requestUri: string, clientId: string): Promise<FoundPushed> {
      const secret = secretOf(requestUri);
      if (secret === undefined) return { kind: 'unknown' };
      const [row] = await storage.db
        .select()
        .from(t)
        .where(eq(t.requestHash, await digest(secret)))
        .limit(1);
      if (!row) return { kind: 'unknown' };
      // Before used or expired: another client learns nothing of a request_uri that is not its own.
      if (row.clientId !== clientId) return { kind: 'other_client' };
      if (row.usedAt !== null) return { kind: 'used' };
      if (row.expiresAt <= clock.now()) return { kind: 'expired' };
      return { kind: 'open', params: new URLSearchParams(JSON.parse(row.params) as [string, string][]) };
    },

    /**
     * Uses the pushed request up: one statement marks it used only if nobody has and it has not expired,
     * so of two authorization requests naming one request_uri exactly one goes on (RFC 9126 §4:
     * one-time use). False when another took it first, or it expired meanwhile.
     */
    async burn(requestUri: string, clientId: string): Promise<boolean> {
      const secret = secretOf(requestUri);
      if (secret === undefined) return false;
      const now = clock.now();
      const rows = await storage.db
        .update(t)
        .set({ usedAt: now })
        .where(
          and(
            eq(t.requestHash, await digest(secret)),
            eq(t.clientId, clientId),
            isNull(t.usedAt),
            gt(t.expiresAt, now),
          ),
        )
        .returning({ h: t.requestHash });
      return rows.length === 1;
    },
  };
}

export type PushedRequestStore = ReturnType<typeof createPushedRequestStore>;
