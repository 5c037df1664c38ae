import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { verify as bcryptVerify } from '@node-rs/bcrypt';
import { passwordSettings } from '../options.ts';
import { hashProblem, limitsFor, readHash } from './hash-cost.ts';

/** argon2id cost parameters: memory in KiB, passes, lanes (defaults and bounds: options.ts). */
export interface Argon2Params {
  memoryKiB: number;
  iterations: number;
  parallelism: number;
}

const declared = passwordSettings.declarations;
export const DEFAULT_ARGON2: Argon2Params = {
  memoryKiB: declared.PASSWORD_ARGON2_MEMORY_KIB.default,
  iterations: declared.PASSWORD_ARGON2_ITERATIONS.default,
  parallelism: declared.PASSWORD_ARGON2_PARALLELISM.default,
};

/** The kind of a stored or imported hash, or undefined for one this service cannot verify. */
export const hashKind = (encoded: string): 'argon2id' | 'bcrypt' | undefined => readHash(encoded)?.kind;

/** bcrypt reads only the first 72 bytes of a password; the rest never counted where the hash was made. */
const BCRYPT_MAX_BYTES = 72;
const utf8 = new TextEncoder();

/**
 * Verifies an imported bcrypt hash through @node-rs/bcrypt, on a worker thread of the runtime's pool
 * (libuv on Node and Deno, Bun's own), so that a costly hash (cost 12 takes about 300 ms) never holds the
 * event loop: a burst of wrong passwords for such handles would otherwise stall every request of the
 * process. bcrypt reads the first 72 bytes of a password, and is given no more.
 */
function verifyBcrypt(encoded: string, password: string): Promise<boolean> {
  return bcryptVerify(utf8.encode(password).subarray(0, BCRYPT_MAX_BYTES), encoded);
}

/**
 * Hashing and verification of passwords: argon2id (PHC string) through @node-rs/argon2, which runs on
 * a worker thread on Bun, Node and Deno alike, so a hash never blocks the event loop; bcrypt ($2a$,
 * $2b$, $2y$), for imported hashes only, through @node-rs/bcrypt, the same way.
 */
export function createHasher(params: Argon2Params) {
  const options = {
    // Algorithm.Argon2id: the enum is `const`, which isolated modules may not read from a package.
    algorithm: 2,
    memoryCost: params.memoryKiB,
    timeCost: params.iterations,
    parallelism: params.parallelism,
  };
  const current = `m=${params.memoryKiB},t=${params.iterations},p=${params.parallelism}`;
  // Verified against when the handle is unknown or has no password, so every 401 costs one argon2id.
  const dummy = argon2Hash(crypto.randomUUID(), options);
  const limits = limitsFor(params);
  const problemOf = (encoded: string) => hashProblem(encoded, limits);

  /** Spends the time of a verification and answers false: unknown handles look like wrong passwords. */
  async function verifyDummy(password: string): Promise<false> {
    await argon2Verify(await dummy, password).catch(() => false);
    return false;
  }

  return {
    hash: (password: string) => argon2Hash(password, options),
    /** The limits a hash is checked against (HASH_LIMITS, raised to these parameters). */
    limits,
    /**
     * What keeps a hash from being verified (its form, or a cost over the limits), as a phrase naming
     * the parameter and the limit; undefined for a hash that may be verified.
     */
    problemOf,
    /**
     * Whether the password matches; false for a hash of a kind this service does not know, and false
     * after a dummy verification, never the hash's own, for one that costs more than the limits.
     */
    async verify(encoded: string, password: string): Promise<boolean> {
      if (problemOf(encoded)) return verifyDummy(password);
      const kind = hashKind(encoded);
      if (kind === 'argon2id') return argon2Verify(encoded, password).catch(() => false);
      if (kind === 'bcrypt') return verifyBcrypt(encoded, password).catch(() => false);
      return false;
    },
    verifyDummy,
    /** True for bcrypt and for argon2id with other parameters than the configured ones. */
    needsRehash: (encoded: string) => hashKind(encoded) !== 'argon2id' || !encoded.includes(`$${current}$`),
  };
}

export type Hasher = ReturnType<typeof createHasher>;
