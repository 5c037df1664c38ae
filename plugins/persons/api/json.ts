import * as v from 'valibot';
import type { PersonRecord } from '../../../core/capabilities/person-directory.ts';
import { HANDLE_TYPES } from '../../../core/capabilities/person-directory.ts';

/** PersonRet of the reference, plus created_at. */
export const PersonSchema = v.object({
  person_id: v.string(),
  person_type: v.picklist(['regular', 'anonymous']),
  active: v.boolean(),
  region: v.string(),
  handles: v.array(
    v.object({
      type: v.picklist(HANDLE_TYPES),
      value: v.string(),
      verified: v.pipe(
        v.boolean(),
        v.description(
          'Proven to reach the person: a verification link followed, an SSO provider vouching for the email, or created with verified: true',
        ),
      ),
    }),
  ),
  groups: v.array(v.string()),
  created_at: v.pipe(v.string(), v.description('RFC 3339, UTC')),
});

export const personJson = (p: PersonRecord): v.InferOutput<typeof PersonSchema> => ({
  person_id: p.personId,
  person_type: p.personType,
  active: p.active,
  region: p.region,
  handles: p.handles.map((h) => ({ type: h.type, value: h.value, verified: h.verified })),
  groups: p.groups,
  created_at: p.createdAt,
});

/** A person of GET /persons: handles and groups only when `fields` asks for them (both by default). */
export const ListedPersonSchema = v.object({
  ...PersonSchema.entries,
  handles: v.optional(PersonSchema.entries.handles),
  groups: v.optional(PersonSchema.entries.groups),
});

export function listedPersonJson(
  p: PersonRecord,
  fields: { handles: boolean; groups: boolean },
): v.InferOutput<typeof ListedPersonSchema> {
  const { handles, groups, ...rest } = personJson(p);
  return { ...rest, ...(fields.handles ? { handles } : {}), ...(fields.groups ? { groups } : {}) };
}

export const PageMeta = v.object({
  pagination: v.optional(v.object({ limit: v.number(), offset: v.number(), total_count: v.number() })),
  cursor_pagination: v.optional(v.object({ limit: v.number(), cursor: v.string(), total_count: v.number() })),
});
