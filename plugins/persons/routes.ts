import { Elysia } from 'elysia';
import * as v from 'valibot';
import { consistentWrite } from '../../core/http/consistency.ts';
import {
  ErrorEnvelopeSchema,
  errorResponses,
  ok,
  resultOf,
  writeErrorResponses,
} from '../../core/http/envelope.ts';
import { refuseArrayBody } from '../../core/http/object-body.ts';
import { consistencyHeaders, errorDoc, writeErrorDocs } from '../../core/http/openapi-docs.ts';
import { base64url, fromBase64url, isUuid } from '../../core/ids.ts';
import type { ServiceContext } from '../../core/plugin.ts';
import { analyticsContextOf } from './analytics.ts';
import { PersonErrors } from './errors.ts';
import { parseHandleFilter } from './handles.ts';
import {
  BULK_LIMIT,
  PersonCreateSchema,
  PersonPatchSchema,
  parsePutBody,
  personIdOf,
  type Region,
  refuseRepeatedHandles,
  toNewPerson,
} from './input.ts';
import { PageMeta, PersonSchema, personJson } from './json.ts';
import type { PersonStore } from './store.ts';

export const TAGS = ['Persons'];
export const SECURITY = [{ orgId: [], apiKey: [] }];
const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

const ListQuery = v.strictObject(
  {
    limit: v.optional(v.pipe(v.string(), v.regex(/^\d{1,4}$/, `must be an integer from 1 to ${MAX_PAGE}`))),
    cursor: v.optional(v.string()),
    handle: v.optional(
      v.pipe(v.string(), v.description('type:value, such as email_address:ann@example.com')),
    ),
    all_person_types: v.optional(v.picklist(['true', 'false'], 'must be true or false')),
  },
  'is not a parameter of this operation (accepted: limit, cursor, handle, all_person_types)',
);

const PersonIdParams = v.object({ person_id: v.string() });

const encodeCursor = (id: string) => base64url(new TextEncoder().encode(id));
function decodeCursor(cursor: string): string {
  try {
    const id = new TextDecoder().decode(fromBase64url(cursor));
    if (isUuid(id)) return id;
  } catch {}
  throw PersonErrors.INVALID_PERSON_INPUT(
    `query.cursor: not a cursor this endpoint returned (got ${JSON.stringify(cursor)})`,
  );
}

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
          description: `A JSON object: as POST /persons, except that when a person already holds the handles it is updated (active, groups when given; handles it lacks are added) and the answer is 200; handles of two different persons are a 409. A JSON array of 1 to ${BULK_LIMIT} such objects: creates them all or none (any taken or repeated handle refuses the whole request), 201 with the persons in the order sent.`,
          tags: TAGS,
          security: SECURITY,
        },
      },
    )
    .get(
      '/persons',
      async ({ org, query }) => {
        const limit = query.limit === undefined ? DEFAULT_PAGE : Number(query.limit);
        if (limit < 1 || limit > MAX_PAGE)
          throw PersonErrors.INVALID_PERSON_INPUT(`query.limit: must be an integer from 1 to ${MAX_PAGE}`);
        const page = await store.list(org.id, {
          limit,
          after: query.cursor ? decodeCursor(query.cursor) : undefined,
          handle: query.handle !== undefined ? parseHandleFilter(query.handle) : undefined,
          allTypes: query.all_person_types === 'true',
        });
        const last = page.persons.at(-1);
        return {
          meta: {
            cursor_pagination: {
              limit,
              cursor: page.more && last ? encodeCursor(last.personId) : '',
              total_count: page.total,
            },
          },
          result: page.persons.map(personJson),
        };
      },
      {
        apiKey: true,
        query: ListQuery,
        response: { 200: v.object({ meta: PageMeta, result: v.array(PersonSchema) }), ...errorResponses },
        detail: {
          operationId: 'GetPersons',
          summary: "List the organization's persons",
          description: `In creation order. limit 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE}); pass meta.cursor_pagination.cursor back as cursor for the next page (empty on the last). handle=type:value filters by a handle (normalised first). Anonymous persons only with all_person_types=true.`,
          tags: TAGS,
          security: SECURITY,
        },
      },
    )
    .get(
      '/persons/:person_id',
      async ({ org, params }) => ok(personJson(await store.get(org.id, personIdOf(params.person_id)))),
      {
        apiKey: true,
        params: PersonIdParams,
        response: { 200: resultOf(PersonSchema), ...errorResponses },
        detail: {
          operationId: 'GetPersonsPersonId',
          summary: 'Get a person',
          tags: TAGS,
          security: SECURITY,
        },
      },
    )
    .patch(
      '/persons/:person_id',
      async ({ org, params, body, request }) => {
        const id = personIdOf(params.person_id);
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
        const id = personIdOf(params.person_id);
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
