import { and, eq, gt, isNull, or } from 'drizzle-orm';
import { constantTimeEqual, uuidv7 } from '../ids.ts';
import type { Clock } from '../ports/clock.ts';
import type { Storage } from '../ports/storage.ts';
import { digestOf, digestsMatch, newApiKey, parseApiKey } from './api-keys.ts';
import { apiKeys, organizations } from './schema.ts';

const encoder = new TextEncoder();

export interface Organization {
  id: string;
  name: string;
  createdAt: Date;
}

/** What an API key proves: which organization it belongs to. */
export type KeyCheck = { ok: true; orgId: string } | { ok: false };

interface CachedKey {
  orgId: string;
  digest: string;
  expiresAt: number | null;
  /** The secret once it has matched the digest: later checks compare it in constant time, no hashing. */
  verified?: Uint8Array;
}

export interface OrganizationStore {
  create(name: string): Promise<{ organization: Organization; apiKey: string }>;
  get(id: string): Promise<Organization | null>;
  list(): Promise<Organization[]>;
  count(): Promise<number>;
  /** Issues a new key; the organization's other keys expire after `graceSeconds` (0: at once). */
  rotateKey(orgId: string, graceSeconds?: number): Promise<{ apiKey: string; keyId: string }>;
  checkKey(apiKey: string): Promise<KeyCheck>;
  /** Forgets cached keys (a local rotation takes effect at once; other replicas within the cache TTL). */
  forget(): void;
}

/** Entries each cache holds at most; past it, it starts again empty. */
const MAX_CACHED = 10_000;

/**
 * Organizations and their API keys. Key checks are cached for `cacheMs` so the hot path costs no
 * query; a revoked key keeps working on other replicas for at most that long.
 */
export function createOrganizationStore(storage: Storage, clock: Clock, cacheMs = 5000): OrganizationStore {
  // Unknown ids are cached too (as null), so guessing keys costs no query either.
  const keyCache = new Map<string, { key: CachedKey | null; at: number }>();
  const orgCache = new Map<string, { org: Organization | null; at: number }>();

  async function issueKey(db: Storage['db'], orgId: string) {
    const keyId = uuidv7(clock.now());
    const { apiKey, secret } = newApiKey(keyId);
    await db
      .insert(apiKeys)
      .values({ id: keyId, orgId, digest: await digestOf(secret), createdAt: new Date(clock.now()) });
    return { apiKey, keyId };
  }

  return {
    async create(name) {
      const id = uuidv7(clock.now());
      return storage.transaction(async (tx) => {
        const [row] = await tx.db
          .insert(organizations)
          .values({ id, name, createdAt: new Date(clock.now()) })
          .returning();
        const { apiKey } = await issueKey(tx.db, id);
        return { organization: row!, apiKey };
      });
    },
    async get(id) {
      const hit = orgCache.get(id);
      if (hit && clock.now() - hit.at < cacheMs) return hit.org;
      const [row] = await storage.db.select().from(organizations).where(eq(organizations.id, id));
      // Bounded like the key cache: unknown ids cost nothing to send, so they must not grow memory.
      if (orgCache.size >= MAX_CACHED) orgCache.clear();
      orgCache.set(id, { org: row ?? null, at: clock.now() });
      return row ?? null;
    },
    list: () => storage.db.select().from(organizations).orderBy(organizations.createdAt),
    async count() {
      return (await storage.db.select({ id: organizations.id }).from(organizations).limit(1)).length;
    },
    async rotateKey(orgId, graceSeconds = 0) {
      const result = await storage.transaction(async (tx) => {
        const expireAt = new Date(clock.now() + graceSeconds * 1000);
        await tx.db
          .update(apiKeys)
          .set({ expiresAt: expireAt })
          .where(
            and(eq(apiKeys.orgId, orgId), or(isNull(apiKeys.expiresAt), gt(apiKeys.expiresAt, expireAt))),
          );
        return issueKey(tx.db, orgId);
      });
      keyCache.clear();
      return result;
    },
    async checkKey(apiKey) {
      const parsed = parseApiKey(apiKey);
      if (!parsed) return { ok: false };
      const now = clock.now();
      let cached = keyCache.get(parsed.keyId);
      if (!cached || now - cached.at >= cacheMs) {
        const [row] = await storage.db.select().from(apiKeys).where(eq(apiKeys.id, parsed.keyId));
        cached = {
          key: row
            ? { orgId: row.orgId, digest: row.digest, expiresAt: row.expiresAt?.getTime() ?? null }
            : null,
          at: now,
        };
        if (keyCache.size > MAX_CACHED) keyCache.clear();
        keyCache.set(parsed.keyId, cached);
      }
      const entry = cached.key;
      if (!entry) return { ok: false };
      const secret = encoder.encode(parsed.secret);
      if (!(entry.verified && constantTimeEqual(entry.verified, secret))) {
        if (!digestsMatch(entry.digest, await digestOf(parsed.secret))) return { ok: false };
        entry.verified = secret;
      }
      if (entry.expiresAt !== null && entry.expiresAt <= now) return { ok: false };
      return { ok: true, orgId: entry.orgId };
    },
    forget() {
      keyCache.clear();
      orgCache.clear();
    },
  };
}
