/** What the opened-values cache holds at most by default: 8 MiB of keys and plaintexts. */
export const DEFAULT_OPENED_VALUES_BYTES = 8 * 1024 * 1024;

/** Memory a string takes, near enough: two bytes a UTF-16 code unit. */
const bytesOf = (s: string) => 2 * s.length;

/**
 * Attribute values opened (or sealed) lately, by their sealed text: a read of a value read before
 * skips its AES-GCM open. The sealed text is the key, and it never changes its meaning: a nonce is
 * never reused, so one sealed text is one plaintext, and a write seals anew. A row altered at rest is
 * another sealed text (a miss, opened and refused), and a hit counts only for the place the value was
 * opened for (its context): a sealed value copied to another organization, bucket or key is opened there
 * and refused. Bounded by `maxBytes` (0: off), least recently used first out; a value of more than a
 * sixteenth of the bound is never kept, so one large value cannot empty it.
 *
 * The price: plaintexts stay in the process's memory while they are kept, as they do in any response
 * being written. Values are still sealed at rest.
 */
export function createOpenedValues(maxBytes: number = DEFAULT_OPENED_VALUES_BYTES) {
  if (!Number.isInteger(maxBytes) || maxBytes < 0)
    throw new Error(`the opened-values cache needs a whole number of bytes, 0 for none (got ${maxBytes})`);
  interface Entry {
    context: string;
    plaintext: string;
    bytes: number;
  }
  // Two generations, each up to half the bound: new values go to the young one, and a value found in
  // the old one moves to the young one; when the young one is full, it becomes the old one and the old
  // one is dropped whole. Least recently used first out, near enough, at a constant cost a call.
  let young = new Map<string, Entry>();
  let old = new Map<string, Entry>();
  let youngBytes = 0;
  let oldBytes = 0;
  const half = maxBytes / 2;

  function keep(sealed: string, entry: Entry) {
    if (youngBytes + entry.bytes > half) {
      old = young;
      oldBytes = youngBytes;
      young = new Map();
      youngBytes = 0;
    }
    young.set(sealed, entry);
    youngBytes += entry.bytes;
  }

  return {
    /** The plaintext of `sealed` if it was opened for this context lately. */
    get(context: string, sealed: string): string | undefined {
      let entry = young.get(sealed);
      if (entry === undefined) {
        entry = old.get(sealed);
        if (entry === undefined || entry.context !== context) return undefined;
        old.delete(sealed);
        oldBytes -= entry.bytes;
        keep(sealed, entry);
        return entry.plaintext;
      }
      return entry.context === context ? entry.plaintext : undefined;
    },
    /** Keeps a plaintext just opened or sealed for this context. */
    set(context: string, sealed: string, plaintext: string): void {
      const bytes = bytesOf(sealed) + bytesOf(context) + bytesOf(plaintext);
      if (bytes > maxBytes / 16 || young.has(sealed) || old.has(sealed)) return;
      keep(sealed, { context, plaintext, bytes });
    },
    /** Values kept and the bytes they count for. */
    stats: () => ({ values: young.size + old.size, bytes: youngBytes + oldBytes }),
  };
}

export type OpenedValues = ReturnType<typeof createOpenedValues>;
