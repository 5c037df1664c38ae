import type { PGlite, QueryOptions, Transaction } from '@electric-sql/pglite';

/**
 * The type parsers drizzle passes with every query: dates, times and intervals (and their arrays) stay
 * the text Postgres sends. Given as PGlite's own parsers instead, they apply to every query as they are.
 */
const TEXT_KEPT = [1082, 1114, 1184, 1186, 1231, 1115, 1185, 1187, 1182];

export const DRIZZLE_PARSERS: NonNullable<QueryOptions['parsers']> = Object.fromEntries(
  TEXT_KEPT.map((oid) => [oid, (value: string) => value]),
);

/** Parser sets seen from drizzle that DRIZZLE_PARSERS already covers. */
const covered = new WeakSet<object>();

/** The options without `parsers` when PGlite's own parsers already do what they ask; else unchanged. */
function withoutCoveredParsers(options: QueryOptions | undefined): QueryOptions | undefined {
  const parsers = options?.parsers;
  if (!parsers) return options;
  if (!covered.has(parsers)) {
    const oids = Object.keys(parsers).map(Number);
    if (!oids.every((oid) => TEXT_KEPT.includes(oid))) return options;
    covered.add(parsers);
  }
  const { parsers: _, ...rest } = options;
  return rest;
}

function wrapQuery<T extends PGlite | Transaction>(target: T): T {
  return new Proxy(target, {
    get(t, prop) {
      if (prop === 'query')
        return (query: string, params?: unknown[], options?: QueryOptions) =>
          t.query(query, params, withoutCoveredParsers(options));
      if (prop === 'transaction' && 'transaction' in t)
        return <R>(fn: (tx: Transaction) => Promise<R>) =>
          (t as PGlite).transaction((tx) => fn(wrapQuery(tx)));
      const value = Reflect.get(t, prop, t);
      // PGlite keeps its state in private fields: its methods must run on the instance itself.
      return typeof value === 'function' ? value.bind(t) : value;
    },
  });
}

/**
 * The client to hand drizzle. PGlite merges per-query parsers into its whole parser table for every
 * result (`{...parsers, ...options.parsers}`, a copy of a few hundred entries), which was 18 % of the CPU
 * of an attribute write on PGlite. With DRIZZLE_PARSERS given to PGlite at creation, drizzle's identical
 * per-query parsers are dropped on the way and PGlite uses its table as it is. Parsers that differ from
 * DRIZZLE_PARSERS (a newer drizzle) pass through unchanged: slower, never wrong.
 */
export const forDrizzle = (client: PGlite): PGlite => wrapQuery(client);
