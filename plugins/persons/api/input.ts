import * as v from 'valibot';
import { HANDLE_TYPES } from '../../../core/capabilities/person-directory.ts';
import { exactObject, parseOrThrow } from '../../../core/http/validation.ts';
import { isUuid } from '../../../core/ids.ts';
import { PersonErrors } from '../errors.ts';
import { normaliseHandle } from '../handles.ts';
import type { NewPerson } from '../store/persons.ts';

/** The regions a person's data may live in (the reference's list). */
export const REGIONS = [
  'us-iowa',
  'europe-belgium',
  'asia-japan',
  'europe-england',
  'australia-sydney',
] as const;
export type Region = (typeof REGIONS)[number];

/** Persons one PUT /persons may carry. */
export const BULK_LIMIT = 100;
/** Handles and groups one person may be given in a request. */
export const MAX_HANDLES = 10;
export const MAX_GROUPS = 100;

const GROUP_RULE =
  'must be a group name of 1 to 100 letters, digits, _, . and -, starting and ending with a letter or digit';
export const GROUP_NAME_RE = /^[A-Za-z0-9]([\w.-]{0,98}[A-Za-z0-9])?$/;
export const GroupName = v.pipe(v.string(), v.regex(GROUP_NAME_RE, GROUP_RULE));

const HandleSchema = exactObject(
  {
    type: v.picklist(HANDLE_TYPES, `must be one of ${HANDLE_TYPES.join(', ')}`),
    value: v.pipe(v.string(), v.maxLength(320, 'must be at most 320 characters')),
    verified: v.optional(
      v.pipe(
        v.boolean('must be a boolean'),
        v.description(
          'true when the organization has proven the address or number itself; false (the default) until a verification link is followed',
        ),
      ),
    ),
  },
  'member',
);

const unsupported = (what: string) =>
  v.optional(v.custom<never>(() => false, `${what} are not supported when creating a person`));

/** PersonCreateReq of the reference. */
export const PersonCreateSchema = exactObject(
  {
    handles: v.pipe(
      v.array(HandleSchema),
      v.minLength(1, 'must hold at least one handle'),
      v.maxLength(MAX_HANDLES, `must hold at most ${MAX_HANDLES} handles`),
    ),
    active: v.optional(v.boolean()),
    region: v.optional(v.picklist(REGIONS, `must be one of ${REGIONS.join(', ')}`)),
    groups: v.optional(
      v.pipe(v.array(GroupName), v.maxLength(MAX_GROUPS, `must hold at most ${MAX_GROUPS} groups`)),
    ),
    attributes: unsupported('attributes (use the attributes API)'),
    credentials: unsupported(
      'credentials (set a password with PUT /persons/{person_id}/credentials/password)',
    ),
  },
  'member',
);
export type PersonCreate = v.InferOutput<typeof PersonCreateSchema>;

export const PersonPatchSchema = exactObject({ active: v.optional(v.boolean()) }, 'member');
export const GroupsSchema = exactObject(
  {
    groups: v.pipe(v.array(GroupName), v.maxLength(MAX_GROUPS, `must hold at most ${MAX_GROUPS} groups`)),
  },
  'member',
);

/**
 * A validated create body as the store takes it: handles normalised, duplicates within the request
 * refused (400), groups de-duplicated.
 */
export function toNewPerson(body: PersonCreate, where: string, defaultRegion: Region): NewPerson {
  const handles = body.handles.map((h, i) => {
    const at = `${where}.handles[${i}]`;
    if (h.verified && h.type === 'username')
      throw PersonErrors.INVALID_PERSON_INPUT(
        `${at}.verified: a username reaches nobody and cannot be verified`,
      );
    return { ...normaliseHandle(h, at), ...(h.verified ? { verified: true } : {}) };
  });
  return {
    personType: 'regular',
    active: body.active ?? true,
    region: body.region ?? defaultRegion,
    ...(body.region !== undefined ? { regionGiven: true } : {}),
    handles,
    groups: [...new Set(body.groups ?? [])],
  };
}

/** Refuses a handle that appears twice in one request (in one person or across a bulk body). */
export function refuseRepeatedHandles(people: NewPerson[], bulk: boolean) {
  const seen = new Map<string, string>();
  for (const [i, p] of people.entries())
    for (const [j, h] of p.handles.entries()) {
      const key = `${h.type}:${h.value}`;
      const here = `${bulk ? `body[${i}]` : 'body'}.handles[${j}]`;
      const first = seen.get(key);
      if (first)
        throw PersonErrors.INVALID_PERSON_INPUT(
          `${here}: repeats ${first} (${key}); a handle names one person`,
        );
      seen.set(key, here);
    }
}

/** A PUT /persons body: one person (create or update) or an array (bulk create, all or nothing). */
export function parsePutBody(
  body: unknown,
): { bulk: false; one: PersonCreate } | { bulk: true; many: PersonCreate[] } {
  if (!Array.isArray(body)) return { bulk: false, one: parseOrThrow(PersonCreateSchema, body, 'body') };
  const many = parseOrThrow(
    v.pipe(
      v.array(PersonCreateSchema),
      v.minLength(1, 'must hold at least one person'),
      v.maxLength(BULK_LIMIT, `must hold at most ${BULK_LIMIT} persons`),
    ),
    body,
    'body',
  );
  return { bulk: true, many };
}

/** A person ID from the path: 400 when it cannot be one (so no query runs with it). */
export function parsePersonId(id: string, where = 'path parameter person_id'): string {
  if (!isUuid(id))
    throw PersonErrors.INVALID_PERSON_INPUT(`${where} must be a UUID (got ${JSON.stringify(id)})`);
  return id.toLowerCase();
}

export function parseGroupName(name: string): string {
  if (typeof name !== 'string' || !GROUP_NAME_RE.test(name))
    throw PersonErrors.INVALID_PERSON_INPUT(
      `path parameter group_name ${GROUP_RULE} (got ${JSON.stringify(name)})`,
    );
  return name;
}
