import { createPrivateKey, type KeyObject, sign as signBytes } from 'node:crypto';
import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  exportJWK,
  type JWK,
  type JWTPayload,
  jwtVerify,
} from 'jose';
import type { SealedColumn } from '../../core/db/reseal.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { SecretBox } from '../../core/ports/secret-box.ts';
import { type Jwks, type PublicJwk, publicJwkOf, type Signer } from '../../core/ports/signer.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { signingKeys } from './schema.ts';

export interface LocalKeysOptions {
  storage: Storage;
  secrets: SecretBox;
  clock: Clock;
  /** How long a replaced key stays published in the JWKS. @default 7 days */
  graceMs?: number;
  /** How long a replica trusts its cached view of an organization's keys. @default 60000 */
  cacheMs?: number;
}

interface OrgKeys {
  kid: string;
  /** node:crypto signs with it on the calling thread. */
  privateKey: KeyObject;
  /** WebCrypto signs with it on a thread of the runtime's pool (`offThread`). */
  signingKey: CryptoKey;
  jwks: Jwks;
  verify: ReturnType<typeof createLocalJWKSet>;
  loadedAt: number;
}

const context = (kid: string) => `signing-key:${kid}`;

/** The private keys, for `secrets reseal`. */
export const signingKeysSealed: SealedColumn = {
  name: 'signing_keys.private_sealed',
  table: 'signing_keys',
  keys: ['kid'],
  column: 'private_sealed',
  context: (row) => context(row.kid!),
};

/**
 * ES256 keys per organization, stored in Storage with the private half sealed by the SecretBox.
 * Keys are created on first use under a per-organization advisory lock, so two replicas never make two.
 *
 * Signatures are computed on the calling thread by node:crypto, or with `offThread` by WebCrypto on a
 * thread of the runtime's pool: about 6 us of the event loop's thread per signature rather than 24 us
 * (measured on Bun), but more CPU in all. With it the token endpoint's client_credentials grants went
 * from 15.3k to 21.3k a second on one 2-core machine, and lost up to 28 % on a slower one where the load
 * took the other core (BENCHMARKS.md). Minting tokens, which write to the bus next, stays on the thread:
 * all of them off it, tokens minted on PGlite went from 5.2k to 4.5k a second (see SignOptions.offThread).
 */
export function createLocalKeysSigner(options: LocalKeysOptions): Required<Signer> {
  const { storage, secrets, clock } = options;
  const graceMs = options.graceMs ?? 7 * 24 * 3600_000;
  const cacheMs = options.cacheMs ?? 60_000;
  const cache = new Map<string, OrgKeys>();
  const loading = new Map<string, Promise<OrgKeys>>();

  async function newKeyRow(orgId: string) {
    const { privateKey, publicKey } = await crypto.subtle.generateKey(
      { name: 'ECDSA', namedCurve: 'P-256' },
      true,
      ['sign', 'verify'],
    );
    const pub = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(pub);
    const priv = await exportJWK(privateKey);
    const publicJwk = publicJwkOf({ kid, x: pub.x!, y: pub.y! });
    return {
      kid,
      orgId,
      publicJwk,
      privateSealed: await secrets.seal(JSON.stringify(priv), context(kid)),
      createdAt: new Date(clock.now()),
    };
  }

  async function load(orgId: string, rotate: boolean): Promise<OrgKeys> {
    const rows = await storage.transaction(async (tx) => {
      await tx.query(sql`select pg_advisory_xact_lock(hashtext(${`signing-keys:${orgId}`}))`);
      const now = new Date(clock.now());
      let active = await tx.db
        .select()
        .from(signingKeys)
        .where(
          and(
            eq(signingKeys.orgId, orgId),
            or(isNull(signingKeys.retiredAt), gt(signingKeys.retiredAt, new Date(clock.now() - graceMs))),
          ),
        )
        .orderBy(asc(signingKeys.createdAt));
      if (rotate || !active.some((k) => k.retiredAt === null)) {
        await tx.db
          .update(signingKeys)
          .set({ retiredAt: now })
          .where(and(eq(signingKeys.orgId, orgId), isNull(signingKeys.retiredAt)));
        const row = await newKeyRow(orgId);
        await tx.db.insert(signingKeys).values(row);
        active = [
          ...active.map((k) => ({ ...k, retiredAt: k.retiredAt ?? now })),
          { ...row, retiredAt: null },
        ];
      }
      return active;
    });
    const current = rows.filter((k) => k.retiredAt === null).at(-1)!;
    const jwk = JSON.parse(await secrets.open(current.privateSealed, context(current.kid))) as JWK;
    const privateKey = createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
    const signingKey = await crypto.subtle.importKey(
      'jwk',
      { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, d: jwk.d },
      { name: 'ECDSA', namedCurve: 'P-256' },
      false,
      ['sign'],
    );
    // Newest first: verifiers that try keys in order find the current one at once.
    // Rebuilt in one member order: jsonb hands back a loaded key's members in its own order, so a
    // replica that loaded the key would otherwise serve other bytes (and ETag) than the one that made it.
    const jwks: Jwks = { keys: rows.map((r) => publicJwkOf(r.publicJwk as PublicJwk)).reverse() };
    const keys: OrgKeys = {
      kid: current.kid,
      privateKey,
      signingKey,
      jwks,
      verify: createLocalJWKSet(jwks),
      loadedAt: clock.now(),
    };
    cache.set(orgId, keys);
    return keys;
  }

  /** The organization's keys while the cache holds them fresh, else undefined. */
  function cachedKeys(orgId: string): OrgKeys | undefined {
    const hit = cache.get(orgId);
    return hit && clock.now() - hit.loadedAt < cacheMs ? hit : undefined;
  }

  function keysFor(orgId: string, fresh = false): Promise<OrgKeys> {
    const hit = fresh ? undefined : cachedKeys(orgId);
    if (hit) return Promise.resolve(hit);
    // One load per organization at a time: a burst of first requests makes one key, not one each.
    let pending = loading.get(orgId);
    if (!pending) {
      pending = load(orgId, false).finally(() => loading.delete(orgId));
      loading.set(orgId, pending);
    }
    return pending;
  }

  return {
    async sign(orgId, claims, opts) {
      const keys = cachedKeys(orgId) ?? (await keysFor(orgId));
      const header = { alg: 'ES256', kid: keys.kid, typ: opts?.typ ?? 'JWT' };
      if (!opts?.offThread) return signCompact(header, claims, keys.privateKey);
      const input = signingInput(header, claims);
      const signature = await crypto.subtle.sign(
        { name: 'ECDSA', hash: 'SHA-256' },
        keys.signingKey,
        Buffer.from(input),
      );
      // WebCrypto's ECDSA signature is r || s, as JWS wants it.
      return `${input}.${Buffer.from(signature).toString('base64url')}`;
    },
    signNow(orgId, claims, opts) {
      const keys = cachedKeys(orgId);
      return (
        keys && signCompact({ alg: 'ES256', kid: keys.kid, typ: opts?.typ ?? 'JWT' }, claims, keys.privateKey)
      );
    },
    async jwks(orgId) {
      return (await keysFor(orgId)).jwks;
    },
    async rotate(orgId) {
      const keys = await load(orgId, true);
      return { kid: keys.kid };
    },
    async verify(orgId, jwt) {
      let keys = await keysFor(orgId);
      try {
        return (
          await jwtVerify(jwt, keys.verify, { algorithms: ['ES256'], currentDate: new Date(clock.now()) })
        ).payload;
      } catch (e) {
        // A key made by another replica since our cache was filled: look once more before refusing.
        if ((e as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw e;
        keys = await keysFor(orgId, true);
        return (
          await jwtVerify(jwt, keys.verify, { algorithms: ['ES256'], currentDate: new Date(clock.now()) })
        ).payload;
      }
    },
  };
}

/** Encoded protected headers by kid and typ: a hot signer encodes the same few again and again. */
const encodedHeaders = new Map<string, string>();

function encodedHeader(header: Record<string, string>): string {
  const key = `${header.kid} ${header.typ}`;
  let encoded = encodedHeaders.get(key);
  if (encoded === undefined) {
    encoded = Buffer.from(JSON.stringify(header)).toString('base64url');
    if (encodedHeaders.size > 1000) encodedHeaders.clear();
    encodedHeaders.set(key, encoded);
  }
  return encoded;
}

/** The JWS signing input: the encoded protected header and the claims, without a copy of the claims. */
const signingInput = (header: Record<string, string>, claims: JWTPayload) =>
  `${encodedHeader(header)}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;

/**
 * A compact JWS with ES256, signed synchronously by node:crypto on the calling thread: no copy of the
 * claims (jose deep-copies them, and webhook claims carry whole events).
 */
function signCompact(header: Record<string, string>, claims: JWTPayload, key: KeyObject): string {
  const input = signingInput(header, claims);
  const signature = signBytes('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}
