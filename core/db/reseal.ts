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
  /**
   * The column holds a JSON object whose values are each sealed (name to sealed value), rather than one
   * sealed text. @default false
   */
  readonly map?: boolean;
  /**
   * The context the value was sealed with, from the row's key columns (as text), and for a `map`
   * column the value's name in the object.
   */
  context(row: Readonly<Record<string, string>>, name?: string): string;
}

const BATCH = 500;

/**
 * Seals again, with the current master key, every value of the column sealed with an older one, so the
 * older key can then be taken out of MASTER_KEY. Walks the table in key order, a batch at a time, and
 * updates a row only if its value is still the one read: a write racing with the reseal wins, and its
 * value is sealed with the current key anyway. Safe to run while servers run, and to run again.
 * Returns the number of values sealed again (for a `map` column, the values in it).
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
      )}, ${value}::text as sealed from ${table} ${from} order by ${keyList} limit ${BATCH}`,
    );
    for (const row of rows) {
      const sealed = row.sealed;
      if (!sealed) continue;
      const keyValues = Object.fromEntries(column.keys.map((k) => [k, String(row[k])]));
      const fresh = column.map
        ? await resealMap(secrets, sealed, (name) => column.context(keyValues, name))
        : secrets.isStale(sealed)
          ? { text: await resealOne(secrets, sealed, column.context(keyValues)), values: 1 }
          : undefined;
      if (fresh === undefined) continue;
      const match = sql.join(
        column.keys.map((k, i) => sql`${keys[i]} = ${keyValues[k]}`),
        sql` and `,
      );
      // The row is updated only if its value is still the one read (for a map, the same JSON).
      const updated = await storage.query(
        column.map
          ? sql`update ${table} set ${value} = ${fresh.text}::jsonb where ${match} and ${value} = ${sealed}::jsonb returning 1 as one`
          : sql`update ${table} set ${value} = ${fresh.text} where ${match} and ${value} = ${sealed} returning 1 as one`,
      );
      if (updated.length > 0) resealed += fresh.values;
    }
    if (rows.length < BATCH) return resealed;
    const last = rows[rows.length - 1]!;
    after = column.keys.map((k) => String(last[k]));
  }
}

async function resealOne(secrets: SecretBox, sealed: string, context: string): Promise<string> {
  return secrets.seal(await secrets.open(sealed, context), context);
}

/** A map column's JSON with its stale values sealed again, and how many; undefined when none was stale. */
async function resealMap(
  secrets: SecretBox,
  json: string,
  contextOf: (name: string) => string,
): Promise<{ text: string; values: number } | undefined> {
  // JSON.parse defines own properties, and Object.entries reads them back: `__proto__` stays a name.
  const entries = Object.entries(JSON.parse(json) as Record<string, string>);
  let stale = 0;
  for (const entry of entries) {
    if (!secrets.isStale(entry[1])) continue;
    entry[1] = await resealOne(secrets, entry[1], contextOf(entry[0]));
    stale++;
  }
  if (stale === 0) return undefined;
  // Object.fromEntries defines own properties too, so JSON.stringify writes `__proto__` back as a name.
  return { text: JSON.stringify(Object.fromEntries(entries)), values: stale };
}
