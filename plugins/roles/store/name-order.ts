/** Code-point order: the same on PGlite and on a Postgres of any collation. */
export const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The names without repeats, in code-point order. */
export const sortedUnique = (list: readonly string[]): string[] => [...new Set(list)].sort(compareNames);
