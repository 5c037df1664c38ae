import * as v from 'valibot';
import type { PersonHandle } from '../../../core/capabilities/person-directory.ts';
import { exactObject } from '../../../core/http/validation.ts';
import { base64url, fromBase64url, isUuid } from '../../../core/ids.ts';
import { PersonErrors } from '../errors.ts';
import { parseHandleFilter } from '../handles.ts';
import { FILTER_RULE, type PersonsFilter, parsePersonsFilter } from './filter.ts';

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1000;
/** Person IDs one `ids` may list. */
export const IDS_MAX = 1000;
/** The deepest `offset`; past it, page with the cursor (an offset reads every row it skips). */
export const OFFSET_MAX = 1_000_000;
/** PersonFieldName of the reference. */
export const PERSON_FIELDS = ['handles', 'groups', 'attributes'] as const;

// Elysia hands over a comma-separated value (or a repeated parameter) as an array: either is a list.
const list = (description: string) =>
  v.optional(
    v.pipe(v.union([v.string(), v.array(v.string())], 'must be a string'), v.description(description)),
  );
const joined = (value: string | string[]) => (Array.isArray(value) ? value.join(',') : value);

const boolean = (description: string) =>
  v.optional(v.pipe(v.picklist(['true', 'false'], 'must be true or false'), v.description(description)));

const fieldsParam = list(
  'Comma-separated optional fields to include: handles, groups (both by default; attributes is refused: persons have no attributes here)',
);

/** The query of GET /persons/{person_id}: the reference's `fields` alone. */
export const PersonQuery = exactObject({ fields: fieldsParam }, 'parameter');

/** The members a GET of one person answers, from its `fields`. */
export const parsePersonFields = (query: v.InferOutput<typeof PersonQuery>) =>
  parseFields(query.fields === undefined ? undefined : joined(query.fields));

/** The query of GET /persons, as documented; values are checked by `parseListQuery`, naming the rule. */
export const ListQuery = exactObject(
  {
    limit: v.optional(v.pipe(v.string(), v.description(`1 to ${MAX_PAGE}; default ${DEFAULT_PAGE}`))),
    offset: v.optional(
      v.pipe(
        v.string(),
        v.description(
          `Offset pagination: the number of persons to skip, 0 to ${OFFSET_MAX}; not with cursor`,
        ),
      ),
    ),
    cursor: v.optional(
      v.pipe(
        v.string(),
        v.description('Cursor pagination: meta.cursor_pagination.cursor of the previous page'),
      ),
    ),
    handle: v.optional(
      v.pipe(v.string(), v.description('type:value, such as email_address:ann@example.com')),
    ),
    ids: list(`Comma-separated person IDs, at most ${IDS_MAX}`),
    fields: fieldsParam,
    filter: list(`Must be ${FILTER_RULE}`),
    all_regions: boolean(
      'Default true: every person. false: only persons whose region is the deployment REGION (this deployment holds every region’s persons itself)',
    ),
    all_person_types: boolean('true: anonymous persons too'),
  },
  'parameter',
);
export type ListQueryInput = v.InferOutput<typeof ListQuery>;

/** GET /persons as the store takes it. */
export interface PersonsListRequest {
  limit: number;
  /** Cursor pagination (after a person ID) unless `offset` is given. */
  after?: string;
  offset?: number;
  handle?: PersonHandle;
  ids?: string[];
  filter?: PersonsFilter;
  /** Only persons of this region (all_regions=false). */
  region?: string;
  allTypes: boolean;
  fields: { handles: boolean; groups: boolean };
}

const invalid = (message: string) => PersonErrors.INVALID_PERSON_INPUT(message);

export const encodeCursor = (id: string) => base64url(new TextEncoder().encode(id));
function decodeCursor(cursor: string): string {
  try {
    const id = new TextDecoder().decode(fromBase64url(cursor));
    if (isUuid(id)) return id;
  } catch {}
  throw invalid(`query.cursor: not a cursor this endpoint returned (got ${JSON.stringify(cursor)})`);
}

function integer(name: string, text: string, min: number, max: number): number {
  const n = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= min && n <= max)) throw invalid(`query.${name}: must be an integer from ${min} to ${max}`);
  return n;
}

function parseIds(text: string): string[] {
  const ids = text.split(',').map((s) => s.trim());
  if (ids.length > IDS_MAX)
    throw invalid(`query.ids: must list at most ${IDS_MAX} person IDs (got ${ids.length})`);
  ids.forEach((id, i) => {
    if (!isUuid(id))
      throw invalid(
        `query.ids[${i}]: must be a person ID (a UUID), comma-separated (got ${JSON.stringify(id)})`,
      );
  });
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}

export function parseFields(text: string | undefined): PersonsListRequest['fields'] {
  if (text === undefined) return { handles: true, groups: true };
  const names = text === '' ? [] : text.split(',').map((s) => s.trim());
  for (const [i, name] of names.entries()) {
    if (name === 'attributes')
      throw invalid(
        'query.fields: attributes is not available: persons have no attributes in this service (the attributes API keeps organization buckets)',
      );
    if (!(PERSON_FIELDS as readonly string[]).includes(name))
      throw invalid(`query.fields[${i}]: must be one of handles, groups (got ${JSON.stringify(name)})`);
  }
  return { handles: names.includes('handles'), groups: names.includes('groups') };
}

/**
 * Checks the query of GET /persons and turns it into a list request: 400 naming the parameter and its
 * rule for any bad value, and for a cursor and an offset together.
 */
export function parseListQuery(query: ListQueryInput, localRegion: string): PersonsListRequest {
  if (query.cursor !== undefined && query.offset !== undefined)
    throw invalid(
      'query.cursor and query.offset: give one of them (cursor pagination answers meta.cursor_pagination, offset pagination meta.pagination)',
    );
  return {
    limit: query.limit === undefined ? DEFAULT_PAGE : integer('limit', query.limit, 1, MAX_PAGE),
    ...(query.cursor ? { after: decodeCursor(query.cursor) } : {}),
    ...(query.offset !== undefined ? { offset: integer('offset', query.offset, 0, OFFSET_MAX) } : {}),
    ...(query.handle !== undefined ? { handle: parseHandleFilter(query.handle) } : {}),
    ...(query.ids !== undefined ? { ids: parseIds(joined(query.ids)) } : {}),
    ...(query.filter !== undefined ? { filter: parsePersonsFilter(joined(query.filter)) } : {}),
    ...(query.all_regions === 'false' ? { region: localRegion } : {}),
    allTypes: query.all_person_types === 'true',
    fields: parseFields(query.fields === undefined ? undefined : joined(query.fields)),
  };
}
