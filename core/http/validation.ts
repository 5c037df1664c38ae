import * as v from 'valibot';
import { CoreErrors } from '../errors.ts';

interface IssueLike {
  message: string;
  path?: ReadonlyArray<unknown> | undefined;
}

const keyOf = (seg: unknown): unknown =>
  typeof seg === 'object' && seg !== null && 'key' in seg ? (seg as { key: unknown }).key : seg;

/** `body.custom_headers.X-Foo[0]` from a standard-schema issue path. */
export function pathOf(on: string, path: IssueLike['path']): string {
  let out = on;
  for (const seg of path ?? []) {
    const key = keyOf(seg);
    out += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  }
  return out;
}

/** Valibot's words for a required member that is absent, said as the rule it broke. */
const MISSING_KEY = /^Invalid key: Expected "[^"]*" but received undefined$/;
const ruleOf = (message: string) => (MISSING_KEY.test(message) ? 'is required' : message);

/** How many problems one message lists; the rest are counted. */
export const MAX_LISTED_ISSUES = 10;

/** One line per problem: where, and the rule it broke; past MAX_LISTED_ISSUES, how many more. */
export function formatIssues(on: string, issues: readonly IssueLike[]): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const issue of issues) {
    const line = `${pathOf(on, issue.path)}: ${ruleOf(issue.message)}`;
    if (seen.has(line)) continue;
    seen.add(line);
    if (lines.length < MAX_LISTED_ISSUES) lines.push(line);
  }
  const more = seen.size - lines.length;
  return more > 0 ? `${lines.join('; ')}; and ${more} more` : lines.join('; ');
}

/** Parses a value with a valibot schema, throwing a 400 ServiceError that names each field and rule. */
export function parseOrThrow<S extends v.GenericSchema>(
  schema: S,
  value: unknown,
  on: string,
): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (!result.success) throw CoreErrors.VALIDATION(formatIssues(on, result.issues));
  return result.output;
}
