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

/** What an exact object holds: the members of a JSON body, or the parameters of a query. */
export type ExactKind = 'member' | 'parameter';

/** Options of `exactObject`. */
export interface ExactOptions {
  /** Members taken only to be refused by their own schema (`cannot be changed`): left out of the accepted list. */
  unlisted?: readonly string[];
}

/**
 * An object schema with exactly these entries: an entry it does not list is a 400 naming it and the
 * accepted ones, so a misspelt optional member (`lable`) or parameter (`?stauts=`) cannot pass as
 * "nothing given". Routes that refuse unknown members or parameters say so through this (the OAuth
 * client schemas and the event formats still have their own wording).
 *
 * @example query: exactObject({ status: v.optional(v.string()) }, 'parameter')
 */
export function exactObject<const E extends v.ObjectEntries>(
  entries: E,
  kind: ExactKind,
  options: ExactOptions = {},
) {
  const unlisted = new Set(options.unlisted ?? []);
  const accepted = Object.keys(entries).filter((key) => !unlisted.has(key));
  const where = kind === 'member' ? 'a member of this body' : 'a parameter of this operation';
  const unknown = accepted.length
    ? `is not ${where} (accepted: ${accepted.join(', ')})`
    : `is not ${where} (it takes none)`;
  return v.strictObject(entries, (issue) =>
    issue.expected === 'never'
      ? unknown
      : issue.received === 'undefined'
        ? 'is required'
        : `must be a JSON object (got ${issue.received})`,
  );
}

/** A query that takes no parameters: any one is a 400 naming it. */
export const NoQuery = exactObject({}, 'parameter');

/** A member a modify takes only to refuse it: what it is cannot be changed, and `why` says so. */
export const unchangeable = (why: string) =>
  v.optional(v.pipe(v.never(`cannot be changed: ${why}`), v.description(`Cannot be changed: ${why}`)));
