import type { Database } from '../ports/storage.ts';

/** Runs a statement on a database handle (`storage.db`, or `tx.db` inside a transaction). */
export type Prepared<R> = (db: Database, ...params: unknown[]) => Promise<R[]>;

/**
 * A hot statement of fixed text with positional parameters ($1, $2, ...), run through drizzle's session.
 *
 * With a `name` it is a named query: on postgres.js a prepared statement, made once per connection, after
 * which a run sends Bind and Execute only. An unnamed query costs a parse and plan every time. Give it its
 * parameters as text, numbers or null (an array as `arrayLiteral(...)`, a document as its JSON): then it
 * goes out in one write and costs one round trip. Any other value (a JS array, a Date, a Buffer) makes
 * postgres.js describe the statement first to learn how to encode it, a second round trip, which halved
 * the rate of a one-row unnamed SELECT on 32 connections (the patch in vendor/postgres/PATCHED.md).
 *
 * Without a name (`null`) it is planned afresh for its values on every run. That is for statements on
 * tables that grow fast, looked up by key: Postgres settles a prepared statement on a generic plan after
 * five runs and keeps it until the table is next analysed, and a plan made while the table was nearly
 * empty scans it whole (measured: webhook_deliveries read in full by every load once it held thousands
 * of rows, in the first minute of a deployment, before autovacuum had analysed it).
 *
 * PGlite runs every statement like any other query. The text must not change the columns it returns
 * across migrations (no `select *` of a table), or Postgres refuses a cached plan.
 */
export function prepared<R = Record<string, unknown>>(name: string | null, text: string): Prepared<R> {
  return async (db, ...params) => {
    const result: unknown = await db._.session
      .prepareQuery({ sql: text, params }, undefined, name ?? undefined, false)
      .execute();
    // postgres.js answers with the rows (an array), PGlite with a result that holds them.
    return Array.isArray(result) ? (result as R[]) : (result as { rows: R[] }).rows;
  };
}

/**
 * A Postgres array literal of text values (`{"a","b"}`, quotes and backslashes escaped): an array
 * parameter sent as one text (`$1::text[]`, `$1::uuid[]`), which keeps an unnamed statement to one
 * round trip (see `prepared`).
 */
export function arrayLiteral(values: Iterable<string>): string {
  let out = '';
  for (const v of values) out += `${out ? ',' : ''}"${v.replace(/["\\]/g, '\\$&')}"`;
  return `{${out}}`;
}
