import * as v from 'valibot';
import { exactObject, unchangeable } from '../../../core/http/validation.ts';
import { isUuid } from '../../../core/ids.ts';
import { startsWithBom, unstorableTextRule } from '../../../core/text.ts';
import { RoleErrors } from '../errors.ts';

/** The longest name of a permission or role, in bytes (all its characters are ASCII). */
export const MAX_NAME_BYTES = 128;
export const MAX_DESCRIPTION = 1024;
/** Names one list (a role's permissions, a person's roles or permissions) may hold. */
export const MAX_LIST = 1000;

export const NAME_RULE = `must be 1 to ${MAX_NAME_BYTES} letters, digits, ".", ":", "_" and "-" (and not "." or "..")`;
const NAME_RE = /^[A-Za-z0-9.:_-]{1,128}$/;

/** Whether a permission or role name keeps the rule; "." and ".." could not be named in a URL path. */
export const isName = (s: string): boolean => NAME_RE.test(s) && s !== '.' && s !== '..';

// A regex rather than a check of isName, so that the OpenAPI document shows the rule (`pattern`).
export const Name = v.pipe(
  v.string('must be a string'),
  v.regex(NAME_RE, NAME_RULE),
  v.check((s) => s !== '.' && s !== '..', NAME_RULE),
);
// A description is stored as given and published in the events: Postgres text (and the bus's jsonb)
// holds neither U+0000 nor a lone surrogate (a 500 otherwise), and the embedded database reads a leading
// U+FEFF back without it (core/text.ts), so the GET would differ from what the event carried.
const Description = v.pipe(
  v.string('must be a string'),
  v.maxLength(MAX_DESCRIPTION, `must be at most ${MAX_DESCRIPTION} characters`),
  v.rawCheck(({ dataset, addIssue }) => {
    const rule = dataset.typed ? unstorableTextRule(dataset.value) : undefined;
    if (rule) addIssue({ message: rule });
  }),
  v.check((s) => !startsWithBom(s), 'must not begin with U+FEFF (a byte order mark)'),
);
const names = (what: string) =>
  v.pipe(
    v.array(Name, `must be an array of ${what} names`),
    v.maxLength(MAX_LIST, `must hold at most ${MAX_LIST} names`),
  );

// Bodies take exactly their members: a misspelt one (`descripton`) or a rename (`name` in a PATCH) is a
// 400 naming it, not a 200 that changed nothing.
const RENAME = (what: string) =>
  unchangeable(`it names the ${what}; create one of the new name and delete this one`);
export const PermissionCreateSchema = exactObject(
  { name: Name, description: v.optional(Description) },
  'member',
);
export const PermissionPatchSchema = exactObject(
  { description: v.optional(Description), name: RENAME('permission') },
  'member',
  { unlisted: ['name'] },
);
export const RoleCreateSchema = exactObject(
  { name: Name, description: v.optional(Description), permissions: names('permission') },
  'member',
);
export const RolePatchSchema = exactObject(
  {
    description: v.optional(Description),
    permissions: v.optional(names('permission')),
    name: RENAME('role'),
  },
  'member',
  { unlisted: ['name'] },
);
export const PersonRolesSchema = exactObject({ roles: names('role') }, 'member');
export const PersonPermissionsSchema = exactObject({ permissions: names('permission') }, 'member');

/** A name from the path: 400 naming the parameter when it breaks the rule. */
export function parseName(param: 'permission_name' | 'role_name', value: string): string {
  if (!isName(value))
    throw RoleErrors.INVALID_ROLES_INPUT(
      `path parameter ${param} ${NAME_RULE} (got ${JSON.stringify(value)})`,
    );
  return value;
}

/** A person ID from the path: 400 when it cannot be one (so no query runs with it). */
export function parsePersonId(id: string): string {
  if (!isUuid(id))
    throw RoleErrors.INVALID_ROLES_INPUT(
      `path parameter person_id must be a UUID (got ${JSON.stringify(id)})`,
    );
  return id.toLowerCase();
}
