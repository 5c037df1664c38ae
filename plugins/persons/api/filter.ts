import type { PersonHandle } from '../../../core/capabilities/person-directory.ts';
import { isUuid } from '../../../core/ids.ts';
import { PersonErrors } from '../errors.ts';
import { parseHandleFilter } from '../handles.ts';
import { GROUP_NAME_RE, REGIONS } from './input.ts';

/** One comparison of a filter, its value checked and normalised. */
export type Comparison =
  | { attr: 'person_id'; op: Op; value: string }
  | { attr: 'handles'; op: Op; value: PersonHandle }
  | { attr: 'active'; op: Op; value: boolean }
  | { attr: 'groups'; op: Op; value: string }
  | { attr: 'region'; op: Op; value: string };
type Op = 'eq' | 'ne';

/** Comparisons joined by `and` inside each group, groups joined by `or` (SCIM: `and` binds first). */
export type PersonsFilter = Comparison[][];

/** Characters and comparisons one filter may hold. */
export const FILTER_MAX_LENGTH = 2000;
export const FILTER_MAX_COMPARISONS = 20;

export const FILTER_RULE =
  'a SCIM filter (RFC 7644 3.4.2.2) of comparisons `attribute eq|ne value` joined by and / or (and binds first, no parentheses), where attribute is person_id ("<uuid>"), handles ("type:value"), active (true or false), groups ("<group name>") or region ("<region>")';

// Known to the reference, not kept by this service's persons listing.
const UNSUPPORTED = new Set([
  'roles',
  'permissions',
  'additional_permissions',
  'attributes',
  'attribute_buckets',
  'source_authoritative_status',
]);

function refuse(problem: string): never {
  throw PersonErrors.INVALID_PERSON_INPUT(`query.filter: ${problem}; must be ${FILTER_RULE}`);
}

// A string (JSON escapes), a word (attribute, operator, and/or, true/false), or any other character.
const TOKEN = /\s*(?:("(?:[^"\\]|\\.)*")|([A-Za-z_][A-Za-z0-9_.]*)|(\S))/y;

type Token = { text: string; kind: 'string' | 'word' | 'other'; at: number };

function tokens(text: string): Token[] {
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m; m = TOKEN.exec(text)) {
    const kind = m[1] !== undefined ? 'string' : m[2] !== undefined ? 'word' : 'other';
    const piece = m[1] ?? m[2] ?? m[3] ?? '';
    out.push({ text: piece, kind, at: m.index + m[0].length - piece.length });
    if (TOKEN.lastIndex >= text.length) break;
  }
  return out;
}

function readString(t: Token | undefined, attr: string): string {
  if (t?.kind !== 'string') refuse(`${attr} takes a quoted string${t ? ` (got ${t.text} at ${t.at})` : ''}`);
  try {
    const s: unknown = JSON.parse(t.text);
    if (typeof s === 'string') return s;
  } catch {}
  return refuse(`the string at ${t.at} is not a valid quoted string`);
}

function comparison(attr: Token, op: Token, value: Token | undefined): Comparison {
  const name = attr.text.toLowerCase();
  const o = op.text.toLowerCase();
  if (attr.kind !== 'word') refuse(`expected an attribute at ${attr.at} (got ${attr.text})`);
  if (UNSUPPORTED.has(name))
    refuse(`${name} is not supported by this service (its persons listing keeps no ${name})`);
  if (o !== 'eq' && o !== 'ne') refuse(`operator ${op.text} at ${op.at} is not supported (eq, ne)`);
  switch (name) {
    case 'person_id': {
      const id = readString(value, name);
      if (!isUuid(id)) refuse(`person_id must be compared with a UUID (got ${JSON.stringify(id)})`);
      return { attr: name, op: o, value: id.toLowerCase() };
    }
    case 'handles': {
      const h = readString(value, name);
      return { attr: name, op: o, value: parseHandleFilter(h, 'query.filter: the handles value') };
    }
    case 'active': {
      const b = value?.text.toLowerCase();
      if (value?.kind !== 'word' || (b !== 'true' && b !== 'false'))
        refuse(`active is compared with true or false${value ? ` (got ${value.text})` : ''}`);
      return { attr: name, op: o, value: b === 'true' };
    }
    case 'groups': {
      const g = readString(value, name);
      if (!GROUP_NAME_RE.test(g))
        refuse(`groups must be compared with a group name (got ${JSON.stringify(g)})`);
      return { attr: name, op: o, value: g };
    }
    case 'region': {
      const r = readString(value, name);
      if (!(REGIONS as readonly string[]).includes(r))
        refuse(`region must be one of ${REGIONS.join(', ')} (got ${JSON.stringify(r)})`);
      return { attr: name, op: o, value: r };
    }
    default:
      return refuse(`unknown attribute ${attr.text} at ${attr.at}`);
  }
}

/**
 * The `filter` of GET /persons: the reference's documented forms that this service keeps (person_id,
 * handles, active, groups, region with eq or ne, joined by and / or). Anything else, the reference's
 * roles, permissions and attribute filters included, is a 400 naming the rule.
 *
 * @example parsePersonsFilter('region eq "us-iowa" or region eq "europe-belgium"')
 */
export function parsePersonsFilter(text: string): PersonsFilter {
  if (text.length > FILTER_MAX_LENGTH) refuse(`must be at most ${FILTER_MAX_LENGTH} characters`);
  const ts = tokens(text);
  if (ts.length === 0) refuse('is empty');
  const groups: PersonsFilter = [[]];
  let count = 0;
  for (let i = 0; i < ts.length; ) {
    const [attr, op, value] = [ts[i]!, ts[i + 1], ts[i + 2]];
    if (attr.kind === 'other') refuse(`grouping with ( ) or [ ] is not supported (at ${attr.at})`);
    if (!op) refuse(`the comparison at ${attr.at} has no operator`);
    const last = groups.at(-1)!;
    last.push(comparison(attr, op, value));
    if (++count > FILTER_MAX_COMPARISONS) refuse(`must hold at most ${FILTER_MAX_COMPARISONS} comparisons`);
    i += 3;
    const join = ts[i];
    if (!join) break;
    const word = join.text.toLowerCase();
    if (join.kind !== 'word' || (word !== 'and' && word !== 'or'))
      refuse(`expected and / or at ${join.at} (got ${join.text})`);
    if (!ts[i + 1]) refuse(`${word} at ${join.at} is followed by nothing`);
    if (word === 'or') groups.push([]);
    i += 1;
  }
  return groups;
}
