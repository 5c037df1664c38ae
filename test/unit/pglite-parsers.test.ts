import { describe, expect, it } from 'bun:test';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { forDrizzle } from '../../adapters/pglite/parsers.ts';

describe('the PGlite client handed to drizzle', () => {
  it("keeps drizzle's per-query parsers' effect (dates as text) and applies parsers it does not cover", async () => {
    const storage = await createPgliteStorage();
    try {
      const client = forDrizzle(storage.client);
      const q = `select '2026-11-22 10:00:00+00'::timestamptz as at, 41 as n`;
      const identity = (value: string) => value;
      // What drizzle sends: the dates stay text.
      const dates = await client.query<{ at: unknown; n: unknown }>(q, [], {
        parsers: { 1184: identity, 1114: identity },
      });
      expect(dates.rows[0]).toEqual({ at: '2026-11-22 10:00:00+00', n: 41 });
      // A parser for another type is not dropped.
      const other = await client.query<{ n: unknown }>(q, [], {
        parsers: { 23: (v: string) => Number(v) + 1 },
      });
      expect(other.rows[0]!.n).toBe(42);
      // Inside a transaction too.
      const inTx = await client.transaction((tx) =>
        tx.query<{ n: unknown }>(q, [], { parsers: { 23: (v: string) => `n${v}` } }),
      );
      expect(inTx.rows[0]!.n).toBe('n41');
    } finally {
      await storage.close();
    }
  });
});

describe('text read back from PGlite', () => {
  // Why names and free text refuse a leading U+FEFF (core/text.ts startsWithBom): PGlite decodes each
  // value with a TextDecoder that drops a byte order mark. When this fails, PGlite keeps it: the rule
  // may go.
  it('loses a leading U+FEFF, and keeps one anywhere else', async () => {
    const storage = await createPgliteStorage();
    try {
      const { rows } = await storage.client.query<{ lead: string; inner: string; bytes: number }>(
        'select $1::text as lead, $2::text as inner, octet_length($1::text) as bytes',
        ['\uFEFFk', 'k\uFEFF'],
      );
      expect(rows[0]).toEqual({ lead: 'k', inner: 'k\uFEFF', bytes: 4 });
    } finally {
      await storage.close();
    }
  });
});
