import { type SQL, sql } from 'drizzle-orm';
import type { SecretBox } from '../ports/secret-box.ts';
import type { Storage } from '../ports/storage.ts';

/** A column of sealed values, and how to name the SecretBox context of a row from its key columns. */
export interface SealedColumn {
  /** Reported by `secrets reseal`, such as `attributes.value`. */
  readonly name: string;
  readonly table: string;
  /** The primary key's columns, in the order rows are walked. */
  readonly keys: readonly string[];
  readonly column: string;
  /** The context the value was sealed with, from the row's key columns (as text). */
  context(row: Readonly<Record<string, string>>): string;
}

const BATCH = 500;

/**
 * Seals again, with the current master key, every value of the column sealed with an older one, so the
 * older key can then be taken out of MASTER_KEY. Walks the table in key order, a batch at a time, and
 * updates a row only if its value is still the one read: a write racing with the reseal wins, and its
 * value is sealed with the current key anyway. Safe to run while servers run, and to run again.
 * Returns the number of values sealed again.
 */
export async function resealColumn(
  storage: Storage,
  secrets: SecretBox,
  column: SealedColumn,
): Promise<number> {
  const keys = column.keys.map((k) => sql.identifier(k));
  const keyList = sql.join(keys, sql`, `);
  const table = sql.identifier(column.table);
  const value = sql.identifier(column.column);
  let after: string[] | undefined;
  let resealed = 0;
  for (;;) {
    const from: SQL = after
      ? sql`where (${keyList}) > (${sql.join(
          after.map((v) => sql`${v}`),
          sql`, `,
        )})`
      : sql``;
    const rows = await storage.query<Record<string, string | null>>(
      sql`select ${sql.join(
        column.keys.map((k, i) => sql`${keys[i]}::text as ${sql.identifier(k)}`),
        sql`, `,
      )}, ${value} as sealed from ${table} ${from} order by ${keyList} limit ${BATCH}`,
    );
    for (const row of rows) {
      const sealed = row.sealed;
      if (!sealed || !secrets.isStale(sealed)) continue;
      const keyValues = Object.fromEntries(column.keys.map((k) => [k, String(row[k])]));
      const context = column.context(keyValues);
      const fresh = await secrets.seal(await secrets.open(sealed, context), context);
      const match = sql.join(
        column.keys.map((k, i) => sql`${keys[i]} = ${keyValues[k]}`),
        sql` and `,
      );
      const updated = await storage.query(
        sql`update ${table} set ${value} = ${fresh} where ${match} and ${value} = ${sealed} returning 1 as one`,
      );
      resealed += updated.length;
    }
    if (rows.length < BATCH) return resealed;
    const last = rows[rows.length - 1]!;
    after = column.keys.map((k) => String(last[k]));
  }
}
