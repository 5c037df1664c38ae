import { sql } from 'drizzle-orm';
import { type SecretBox, SecretBoxError } from '../ports/secret-box.ts';
import type { Storage } from '../ports/storage.ts';
import type { SealedColumn } from './reseal.ts';

/** A stored value that did not open, by column and why. */
export interface SealedFailure {
  column: string;
  code: SecretBoxError['code'];
}

/** What a sample of the stored secrets says about the master keys this process holds. */
export interface SealedSample {
  opened: number;
  failed: SealedFailure[];
}

/** Values tried per column: enough to tell a wrong key (none opens) from one altered value. */
const PER_COLUMN = 3;

/**
 * Opens a few values of every sealed column with the keys this process holds. Run at start, it tells a
 * MASTER_KEY that cannot open what the database holds (every value refused) before any request meets
 * it, where otherwise each read of a secret would fail on its own, later. Reads at most three rows of
 * each column (a map column: the first value of each row).
 */
export async function sampleSealed(
  storage: Storage,
  secrets: SecretBox,
  columns: readonly SealedColumn[],
): Promise<SealedSample> {
  const sample: SealedSample = { opened: 0, failed: [] };
  for (const column of columns) {
    const value = sql.identifier(column.column);
    const rows = await storage.query<Record<string, string | null>>(
      sql`select ${sql.join(
        column.keys.map((k) => sql`${sql.identifier(k)}::text as ${sql.identifier(k)}`),
        sql`, `,
      )}, ${value}::text as sealed from ${sql.identifier(column.table)}
      where ${value} is not null limit ${PER_COLUMN}`,
    );
    for (const row of rows) {
      const keys = Object.fromEntries(column.keys.map((k) => [k, String(row[k])]));
      const first = column.map
        ? Object.entries(JSON.parse(row.sealed ?? '{}') as Record<string, string>)[0]
        : undefined;
      const sealed = column.map ? first?.[1] : row.sealed;
      if (!sealed) continue;
      try {
        await secrets.open(sealed, column.context(keys, first?.[0]));
        sample.opened++;
      } catch (e) {
        if (!(e instanceof SecretBoxError)) throw e;
        sample.failed.push({ column: column.name, code: e.code });
      }
    }
  }
  return sample;
}

/** Why a sample's failures happened, in an operator's words. */
export function describeFailures(failed: readonly SealedFailure[]): string {
  const columns = [...new Set(failed.map((f) => f.column))].join(', ');
  const codes = new Set(failed.map((f) => f.code));
  const why = [
    codes.has('UNKNOWN_KEY') ? 'sealed with a key id MASTER_KEY does not list' : '',
    codes.has('TAMPERED') ? 'sealed with another key of the same id, or altered at rest' : '',
    codes.has('MALFORMED') ? 'not a sealed value' : '',
  ].filter(Boolean);
  return `${failed.length} stored secret(s) of ${columns} do not open: ${why.join('; ')}`;
}
