import type { Argon2Params } from './hashing.ts';

/**
 * The most a stored or imported hash may cost to verify. Whoever knows a handle makes the service verify
 * its hash on every sign-in attempt, so a hash imported at bcrypt cost 31 or argon2id with gigabytes of
 * memory would let one organization's import stall sign-ins for all of them. Measured here (2 shared
 * cores, Bun): a bcrypt verification at cost 13 takes about 550 ms (cost 14 would be 1.1 s); argon2id at
 * 128 MiB and 4 passes (the work limit) about 300 ms, at 64 MiB, t=3, p=4 about 55 ms.
 *
 * They cover OWASP's argon2id configurations (7 to 46 MiB, 1 to 5 passes) and the defaults of common
 * exporters: bcrypt 10 to 12 (Rails, Laravel, Django, Spring, Go, Auth0, Supabase), argon2id 64 MiB with
 * t=3 p=4 (argon2-cffi, node-argon2, RFC 9106's second choice), 64 MiB t=4 (PHP), 100 MiB t=2 p=8
 * (Django), 7 MiB t=5 (Keycloak), 16 MiB t=2 (Spring Security). The service's own configured argon2id
 * parameters raise them: a hash no costlier than the ones the service makes itself is always accepted.
 */
export const HASH_LIMITS = {
  /** bcrypt's cost factor (log2 of the rounds): 4 (bcrypt's least) to 13. */
  bcryptCost: 13,
  /** argon2id memory in KiB: 128 MiB. */
  argon2MemoryKiB: 131_072,
  /** argon2id passes. */
  argon2Iterations: 10,
  /** argon2id lanes (threads it may use). */
  argon2Parallelism: 16,
  /** argon2id memory × passes (KiB), which the time of a verification follows: 128 MiB at 4 passes. */
  argon2Work: 524_288,
} as const;

/** An argon2id salt and hash, in bytes: what argon2 libraries make (16 and 32) with room either side. */
const SALT_BYTES = { min: 8, max: 64 };
const OUTPUT_BYTES = { min: 16, max: 64 };
const BCRYPT_MIN_COST = 4;

const ARGON2ID_RE =
  /^\$argon2id\$v=19\$m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,10})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;
const BCRYPT_RE = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

/** The parameters of a hash this service can verify. */
export type HashParams =
  | { kind: 'bcrypt'; cost: number }
  | {
      kind: 'argon2id';
      memoryKiB: number;
      iterations: number;
      parallelism: number;
      saltBytes: number;
      hashBytes: number;
    };

/** Bytes of unpadded base64 of `chars` characters. */
const b64Bytes = (chars: number) => Math.floor((chars * 3) / 4);

/** The kind and parameters of a hash, or undefined for a form this service does not verify. */
export function readHash(encoded: string): HashParams | undefined {
  const bcrypt = BCRYPT_RE.exec(encoded);
  if (bcrypt) return { kind: 'bcrypt', cost: Number(bcrypt[1]) };
  const argon = ARGON2ID_RE.exec(encoded);
  if (!argon) return undefined;
  const [, m, t, p, salt, hash] = argon;
  return {
    kind: 'argon2id',
    memoryKiB: Number(m),
    iterations: Number(t),
    parallelism: Number(p),
    saltBytes: b64Bytes(salt?.length ?? 0),
    hashBytes: b64Bytes(hash?.length ?? 0),
  };
}

export const UNKNOWN_FORM =
  'password_hash must be an argon2id PHC string ($argon2id$v=19$m=...,t=...,p=...$salt$hash) or a bcrypt hash ($2a$, $2b$ or $2y$); argon2i, argon2d and argon2 version 16 are not accepted';

/** The limits in force: HASH_LIMITS, raised to the service's own argon2id parameters. */
export function limitsFor(own: Argon2Params) {
  return {
    bcryptCost: HASH_LIMITS.bcryptCost,
    argon2MemoryKiB: Math.max(HASH_LIMITS.argon2MemoryKiB, own.memoryKiB),
    argon2Iterations: Math.max(HASH_LIMITS.argon2Iterations, own.iterations),
    argon2Parallelism: Math.max(HASH_LIMITS.argon2Parallelism, own.parallelism),
    argon2Work: Math.max(HASH_LIMITS.argon2Work, own.memoryKiB * own.iterations),
  };
}

export type HashLimits = ReturnType<typeof limitsFor>;

const range = (what: string, got: number, min: number, max: number) =>
  got < min || got > max ? `password_hash: ${what} must be ${min} to ${max} (got ${got})` : undefined;

/**
 * What is wrong with a hash (a message naming password_hash, the parameter and its limit), or undefined
 * for one that may be verified.
 */
export function hashProblem(encoded: string, limits: HashLimits): string | undefined {
  const h = readHash(encoded);
  if (!h) return UNKNOWN_FORM;
  if (h.kind === 'bcrypt') return range('bcrypt cost', h.cost, BCRYPT_MIN_COST, limits.bcryptCost);
  const work = h.memoryKiB * h.iterations;
  return (
    range('argon2id parallelism p', h.parallelism, 1, limits.argon2Parallelism) ??
    range('argon2id memory m (KiB)', h.memoryKiB, 8 * h.parallelism, limits.argon2MemoryKiB) ??
    range('argon2id iterations t', h.iterations, 1, limits.argon2Iterations) ??
    (work > limits.argon2Work
      ? `password_hash: argon2id memory × iterations (m × t) must be at most ${limits.argon2Work} (got ${work})`
      : undefined) ??
    range('argon2id salt length (bytes)', h.saltBytes, SALT_BYTES.min, SALT_BYTES.max) ??
    range('argon2id hash length (bytes)', h.hashBytes, OUTPUT_BYTES.min, OUTPUT_BYTES.max)
  );
}
