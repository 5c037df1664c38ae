import { Elysia } from 'elysia';
import * as v from 'valibot';
import { consistentWrite } from '../../../core/http/consistency.ts';
import {
  ErrorEnvelopeSchema,
  errorResponses,
  ok,
  resultOf,
  writeErrorResponses,
} from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import {
  API_KEY_SECURITY,
  consistencyHeaders,
  errorDoc,
  writeErrorDocs,
} from '../../../core/http/openapi-docs.ts';
import { analyticsReader } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { PersonStore } from '../store/persons.ts';
import {
  BULK_LIMIT,
  PersonCreateSchema,
  PersonPatchSchema,
  parsePersonId,
  parsePutBody,
  type Region,
  refuseRepeatedHandles,
  toNewPerson,
} from './input.ts';
import { ListedPersonSchema, listedPersonJson, PageMeta, PersonSchema, personJson } from './json.ts';
import {
  DEFAULT_PAGE,
  encodeCursor,
  IDS_MAX,
  ListQuery,
  MAX_PAGE,
  OFFSET_MAX,
  PersonQuery,
  parseListQuery,
  parsePersonFields,
} from './list-query.ts';

export const TAGS = ['Persons'];
export const SECURITY = API_KEY_SECURITY;
const PersonIdParams = v.object({ person_id: v.string() });

const deleteResponses = {
  204: { description: 'No content: the person, its handles and memberships are deleted' },
  400: errorDoc('A person_id that is not a UUID, or a bad consistency header'),
  401: errorDoc('No API key, or not a valid one'),
  403: errorDoc('A key of another organization'),
  404: errorDoc('No such person in this organization'),
  ...writeErrorDocs,
};

/** POST, PUT, GET /persons and GET, PATCH, DELETE /persons/{person_id}. */
export function personRoutes(ctx: ServiceContext, store: PersonStore, defaultRegion: Region) {
  const headers = consistencyHeaders(ctx.headers);
  const write = <T>(request: Request, fn: () => Promise<T>) => consistentWrite(request, ctx.headers, fn);
  const analyticsContextOf = analyticsReader(ctx.headers);
  return new Elysia()
    .use(ctx.auth)
    .post(
      '/persons',
      async ({ org, body, request, set }) => {
        const person = toNewPerson(body, 'body', defaultRegion);
        refuseRepeatedHandles([person], false);
        const [made] = await write(request, () =>
          store.create(org.id, [person], analyticsContextOf(request)),
        );
        set.status = 201;
        return ok(personJson(made!));
      },
      {
        apiKey: true,
        parse: 'json',
        transform: refuseArrayBody,
        body: PersonCreateSchema,
        headers,
        response: {
          201: resultOf(PersonSchema),
          ...errorResponses,
          409: ErrorEnvelopeSchema,
          ...writeErrorResponses,
        },
        detail: {
          operationId: 'PostPersons',
          summary: 'Create a person',
          description:
            'At least one handle; handles are normalised and unique in the organization (409 when taken). Groups are made on first use. Emits PersonCreated_v1.',
          tags: TAGS,
          security: SECURITY,
        },
      },
    )
    .put(
      '/persons',
      async ({ org, body, request, set }) => {
        const parsed = parsePutBody(body);
        const analytics = analyticsContextOf(request);
        if (parsed.bulk) {
          const people = parsed.many.map((p, i) => toNewPerson(p, `body[${i}]`, defaultRegion));
          refuseRepeatedHandles(people, true);
          const made = await write(request, () => store.create(org.id, people, analytics));
          set.status = 201;
          return ok(made.map(personJson));
        }
        const person = toNewPerson(parsed.one, 'body', defaultRegion);
        refuseRepeatedHandles([person], false);
        const groups = parsed.one.groups ? person.groups : undefined;
        const done = await write(request, () =>
          store.upsert(org.id, person, { active: parsed.one.active, groups }, analytics),
        );
        set.status = done.created ? 201 : 200;
        return ok(personJson(done.person));
      },
      {
        apiKey: true,
        parse: 'json',
        headers,
        body: v.unknown(),
        response: {
          200: resultOf(PersonSchema),
          201: resultOf(v.union([PersonSchema, v.array(PersonSchema)])),
          ...errorResponses,
          409: ErrorEnvelopeSchema,
          ...writeErrorResponses,
        },
        detail: {
          operationId: 'PutPersons',
          summary: 'Create or update a person, or create many at once',
          description: `A JSON object: as POST /persons, except that when a person already holds the handles it is updated (active, groups when given; handles it lacks are added) and the answer is 200; handles of two different persons are a 409, and so is an explicit region other than that of the person holding the handles (the message names the handle and both regions). A JSON array of 1 to ${BULK_LIMIT} such objects: creates them all or none (any taken or repeated handle refuses the whole request), 201 with the persons in the order sent.`,
          tags: TAGS,
          security: SECURITY,
        },
      },
    )
    .get(
      '/persons',
      async ({ org, query }) => {
        const q = parseListQuery(query, ctx.config.region);
        const page = await store.list(org.id, q);
        const offset = q.offset ?? 0;
        const last = page.persons.at(-1);
        const cursor = page.more && last ? encodeCursor(last.personId) : '';
        return {
          meta: {
            // An offset answers the reference's meta.pagination, a cursor meta.cursor_pagination; a
            // request with neither gets both (offset 0, and the cursor to the next page).
            ...(q.after === undefined
              ? { pagination: { limit: q.limit, offset, total_count: page.total } }
              : {}),
            ...(q.offset === undefined
              ? { cursor_pagination: { limit: q.limit, cursor, total_count: page.total } }
              : {}),
          },
          result: page.persons.map((p) => listedPersonJson(p, q.fields)),
        };
      },
      {
        apiKey: true,
        query: ListQuery,
        response: {
          200: v.object({ meta: PageMeta, result: v.array(ListedPersonSchema) }),
          ...errorResponses,
        },
        detail: {
          operationId: 'GetPersons',
          summary: "List the organization's persons",
          description: `In creation order. limit 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE}). Two ways to page, not together (400): offset (0 to ${OFFSET_MAX}) answers meta.pagination {limit, offset, total_count}; cursor (pass meta.cursor_pagination.cursor back; empty on the last page) answers meta.cursor_pagination; with neither, both are answered. handle=type:value filters by a handle (normalised first); ids by up to ${IDS_MAX} comma-separated person IDs; filter by a SCIM expression (person_id, handles, active, groups, region; eq, ne; and, or). fields=handles,groups picks the optional members answered (both by default). all_regions=false lists only persons of the deployment REGION. Anonymous persons only with all_person_types=true. Every condition applies together.`,
          tags: TAGS,
          security: SECURITY,
        },
      },
    )
    .get(
      '/persons/:person_id',
      async ({ org, params, query }) =>
        ok(
          listedPersonJson(
            await store.get(org.id, parsePersonId(params.person_id)),
            parsePersonFields(query),
          ),
        ),
      {
        apiKey: true,
        params: PersonIdParams,
        query: PersonQuery,
        response: { 200: resultOf(ListedPersonSchema), ...errorResponses },
        detail: {
          operationId: 'GetPersonsPersonId',
          summary: 'Get a person',
          description:
            'fields=handles,groups picks the optional members answered (both by default; an empty value answers neither).',
          tags: TAGS,
          security: SECURITY,
        },
      },
    )
    .patch(
      '/persons/:person_id',
      async ({ org, params, body, request }) => {
        const id = parsePersonId(params.person_id);
        const person =
          body.active === undefined
            ? await store.get(org.id, id)
            : await write(request, () => store.setActive(org.id, id, body.active!));
        return ok(personJson(person));
      },
      {
        apiKey: true,
        params: PersonIdParams,
        parse: 'json',
        transform: refuseArrayBody,
        body: PersonPatchSchema,
        headers,
        response: { 200: resultOf(PersonSchema), ...errorResponses, ...writeErrorResponses },
        detail: {
          operationId: 'PatchPersonsPersonId',
          summary: 'Modify a person',
          description: 'Sets whether the person is active.',
          tags: TAGS,
          security: SECURITY,
        },
      },
    )
    .delete(
      '/persons/:person_id',
      async ({ org, params, request, set }) => {
        const id = parsePersonId(params.person_id);
        await write(request, () => store.delete(org.id, id));
        set.status = 204;
      },
      {
        apiKey: true,
        params: PersonIdParams,
        headers,
        detail: {
          operationId: 'DeletePersonsPersonId',
          summary: 'Delete a person',
          description: 'Deletes the person with its handles and group memberships. Emits PersonDeleted_v1.',
          responses: deleteResponses,
          tags: TAGS,
          security: SECURITY,
        },
      },
    );
}
