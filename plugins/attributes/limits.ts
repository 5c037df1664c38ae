import type { ServiceError } from '../../core/errors.ts';
import { isWellFormedText, startsWithBom } from '../../core/text.ts';
import { AttributeErrors, shown } from './errors.ts';

/** An attribute name is 1 to 70 bytes of UTF-8 (the spec's limit counts bytes, not characters). */
export const MAX_NAME_BYTES = 70;
/** A value is at most 64 KiB once serialized as compact JSON (as `JSON.stringify` writes it). */
export const MAX_VALUE_BYTES = 64 * 1024;
/** Attributes one request may carry over all its buckets (more if a bucket may hold more): a bounded transaction. */
export const MAX_ATTRIBUTES_PER_REQUEST = 1000;
/** Buckets one multi-bucket request may name. */
export const MAX_BUCKETS_PER_REQUEST = 200;
/** Problems listed in one error message before the rest are counted. */
const MAX_LISTED = 10;

/** UTF-8 length of a well-formed string, without encoding it. */
export function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** An attribute checked and serialized: the JSON text is what gets sealed. */
export interface PreparedAttribute {
  key: string;
  json: string;
}

/** Collects problems, then throws them as one 400 that lists each (the first ten, and a count). */
export class Problems {
  // A set, in insertion order: a body of many bad keys must not cost a comparison per pair of them.
  private readonly seen = new Set<string>();
  add(message: string): void {
    this.seen.add(message);
  }
  get count(): number {
    return this.seen.size;
  }
  throwIfAny(raise: (message: string) => ServiceError = AttributeErrors.INVALID_ATTRIBUTES): void {
    if (this.seen.size === 0) return;
    const listed = [...this.seen].slice(0, MAX_LISTED);
    const more = this.seen.size - listed.length;
    throw raise(listed.join('; ') + (more > 0 ? `; and ${more} more problems` : ''));
  }
}

/** Why a string cannot be an attribute name, or null when it can. */
export function nameProblem(name: string): string | null {
  if (name.length === 0)
    return `an attribute name must be 1 to ${MAX_NAME_BYTES} bytes of UTF-8 (got an empty name)`;
  // Postgres text holds neither NUL nor lone surrogates; refusing them keeps every name round-tripping.
  if (!isWellFormedText(name))
    return `attribute name ${shown(name)} is not well-formed Unicode (a lone surrogate)`;
  if (name.includes('\u0000')) return `attribute name ${shown(name)} contains U+0000, which cannot be stored`;
  const bytes = utf8Bytes(name);
  if (bytes > MAX_NAME_BYTES)
    return `attribute name ${shown(name)} is ${bytes} bytes of UTF-8; the limit is ${MAX_NAME_BYTES} bytes`;
  return null;
}

/**
 * Why a name cannot be written, or null when it can: nameProblem, and no leading U+FEFF (it would read
 * back without it on the embedded database, and the value bound to the name would no longer open).
 * Reads and deletes take such a name still, so one stored before this rule can be removed.
 */
export function writableNameProblem(name: string): string | null {
  const bad = nameProblem(name);
  if (bad) return bad;
  if (startsWithBom(name))
    return `attribute name ${shown(name)} begins with U+FEFF (a byte order mark), which a name may not begin with`;
  return null;
}

/** What a body holds instead of an object, for messages. */
export const typeOf = (x: unknown) =>
  x === undefined ? 'no body' : x === null ? 'null' : Array.isArray(x) ? 'an array' : `a ${typeof x}`;
export const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** How deeply a value may nest arrays and objects (docs/guides/attribute-buckets.md, Limits). */
export const MAX_VALUE_DEPTH = 64;

/**
 * The HTTP layer's whole-body bound for the attribute writes (the route option `bodyDepth`). A value
 * sits inside the body's own objects (the bucket's object; for several buckets, the body's object of
 * buckets too), and those wrapper levels must not count against it. One level more is let through so
 * that a value just past MAX_VALUE_DEPTH is refused by valueProblem, naming the attribute, rather than
 * by the HTTP layer's message about the whole body. Deeper bodies still meet the HTTP bound before any
 * attribute code walks them; lifting the bound for these routes would leave the parse as the only check.
 */
export const WRITE_BODY_DEPTH = { oneBucket: MAX_VALUE_DEPTH + 2, buckets: MAX_VALUE_DEPTH + 3 } as const;

/**
 * Why a value cannot be stored as JSON that reads back the same, or null when it can. Walked with a
 * stack of its own, not recursion: a value of any depth gets this answer, never a stack overflow. A
 * value of more than MAX_VALUE_BYTES parts serializes to more bytes than that (each part takes one at
 * least), so the walk stops there, which also ends it on a cycle.
 */
function valueProblem(value: unknown): string | null {
  const stack: Array<[unknown, number]> = [[value, 0]];
  for (let parts = 1; stack.length > 0; parts++) {
    if (parts > MAX_VALUE_BYTES)
      return `is more than ${MAX_VALUE_BYTES} bytes as JSON; the limit is ${MAX_VALUE_BYTES} bytes (64 KiB)`;
    const [x, depth] = stack.pop()!;
    if (typeof x === 'number') {
      // JSON.parse reads 1e400 as Infinity, which JSON.stringify would write back as null.
      if (Number.isNaN(x)) return 'holds NaN, which is not a JSON number';
      if (!Number.isFinite(x))
        return `holds a number beyond the range of a double (such as 1e400; the largest is about 1.8e308), which JSON cannot carry`;
    } else if (typeof x === 'object' && x !== null) {
      if (depth >= MAX_VALUE_DEPTH) return `nests arrays and objects deeper than ${MAX_VALUE_DEPTH} levels`;
      for (const item of Array.isArray(x) ? x : Object.values(x)) stack.push([item, depth + 1]);
    } else if (typeof x !== 'string' && typeof x !== 'boolean' && x !== null)
      // Only the deployment's own writes (the attributeStore capability) can hold these.
      return `holds ${x === undefined ? 'undefined' : `a ${typeof x}`}, which is not a JSON value`;
  }
  return null;
}

/**
 * Checks one bucket's attributes against the limits and serializes each value. `where` names the
 * bucket in messages (`body` for a single bucket, `body.<bucket>` for several).
 */
export function prepareAttributes(value: unknown, where: string, problems: Problems): PreparedAttribute[] {
  if (!isObject(value)) {
    problems.add(`${where} must be a JSON object of attributes (got ${typeOf(value)})`);
    return [];
  }
  const out: PreparedAttribute[] = [];
  for (const key of Object.keys(value)) {
    const bad = writableNameProblem(key);
    if (bad) {
      problems.add(`${where}: ${bad}`);
      continue;
    }
    const wrong = valueProblem(value[key]);
    if (wrong) {
      problems.add(`${where}: attribute ${shown(key)} ${wrong}`);
      continue;
    }
    const json = JSON.stringify(value[key]);
    const bytes = utf8Bytes(json);
    if (bytes > MAX_VALUE_BYTES) {
      problems.add(
        `${where}: attribute ${shown(key)} is ${bytes} bytes as JSON; the limit is ${MAX_VALUE_BYTES} bytes (64 KiB)`,
      );
      continue;
    }
    out.push({ key, json });
  }
  return out;
}
