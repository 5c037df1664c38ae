import { Elysia } from 'elysia';
import * as v from 'valibot';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf } from '../../../core/http/envelope.ts';
import { ifMatchOf } from '../../../core/http/etag.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { errorDoc, ifMatchHeaders, routeDetail, writeErrorDocs } from '../../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { type Assignments, namesEtag } from '../store/assignments.ts';
import { MAX_LIST, PersonPermissionsSchema, PersonRolesSchema, parsePersonId } from './input.ts';
import { SECURITY } from './routes.ts';

const TAGS = ['Persons'];
const Names = resultOf(v.array(v.string()));
const PersonIdParams = v.object({ person_id: v.string() });

const setResponses = (what: string) => ({
  204: { description: `No content: the person holds exactly these ${what}` },
  400: errorDoc(
    `A name that breaks the rule, ${what} the organization does not have, or a bad consistency header`,
  ),
  401: errorDoc('No API key, or not a valid one'),
  403: errorDoc('A key of another organization'),
  404: errorDoc('No such person in this organization'),
  412: errorDoc(`If-Match names no current ETag of the person's ${what}: nothing was written`),
  ...writeErrorDocs,
});

/** The 200 of a GET whose ETag a PUT's If-Match may name. */
const namesResponses = (what: string) => ({
  200: {
    description: `The ${what}, with an ETag (strong) of them for If-Match`,
    headers: { ETag: { schema: { type: 'string' as const } } },
    content: {
      'application/json': {
        schema: {
          type: 'object' as const,
          properties: { result: { type: 'array' as const, items: { type: 'string' as const } } },
          required: ['result'],
        },
      },
    },
  },
  400: errorDoc('A person_id that is not a UUID'),
  401: errorDoc('No API key, or not a valid one'),
  403: errorDoc('A key of another organization'),
  404: errorDoc('No such person in this organization'),
});

/** GET, PUT /persons/{id}/roles; GET, PUT /persons/{id}/additional-permissions; GET /persons/{id}/permissions. */
export function personRoleRoutes(ctx: ServiceContext, assignments: Assignments) {
  const headers = ifMatchHeaders(ctx.headers);
  const detail = routeDetail(TAGS, SECURITY);
  return new Elysia()
    .use(ctx.auth)
    .get(
      '/persons/:person_id/roles',
      async ({ org, params, set }) => {
        const roles = await assignments.roles(org.id, parsePersonId(params.person_id));
        set.headers.etag = await namesEtag(roles);
        return ok(roles);
      },
      {
        apiKey: true,
        params: PersonIdParams,
        detail: {
          ...detail(
            'GetPersonsPersonIdRoles',
            "A person's roles",
            'Role names, sorted. The ETag names this state: send it as If-Match to PUT to write only if nobody changed the roles meanwhile.',
          ),
          // Here rather than a `response` map, which would leave out the ETag header.
          responses: namesResponses('role names'),
        },
      },
    )
    .put(
      '/persons/:person_id/roles',
      async ({ org, params, body, request, set }) => {
        const id = parsePersonId(params.person_id);
        const ifMatch = ifMatchOf(request);
        const roles = await consistentWrite(request, ctx.headers, () =>
          assignments.setRoles(org.id, id, body.roles, ifMatch),
        );
        set.headers.etag = await namesEtag(roles);
        set.status = 204;
      },
      {
        apiKey: true,
        params: PersonIdParams,
        parse: 'json',
        transform: refuseArrayBody,
        body: PersonRolesSchema,
        headers,
        detail: {
          ...detail(
            'PutPersonsPersonIdRoles',
            "Set a person's roles",
            `The person holds exactly these roles afterwards (at most ${MAX_LIST}; duplicates ignored; [] revokes every role). Every role must exist: 400 naming those that do not. With If-Match (an ETag of GET), 412 and nothing written unless it names the roles' current state; the 204 carries the new ETag. Emits RolesSetToPerson_v1 and its _InRegion_v1 twin (the person's region) when the roles change.`,
          ),
          responses: setResponses('roles'),
        },
      },
    )
    .get(
      '/persons/:person_id/additional-permissions',
      async ({ org, params, set }) => {
        const names = await assignments.additionalPermissions(org.id, parsePersonId(params.person_id));
        set.headers.etag = await namesEtag(names);
        return ok(names);
      },
      {
        apiKey: true,
        params: PersonIdParams,
        detail: {
          ...detail(
            'GetPersonsPersonIdAdditionalPermissions',
            "A person's additional permissions",
            'Permission names granted to the person directly, sorted; not those of its roles. The ETag names this state, for If-Match on PUT.',
          ),
          responses: namesResponses('permission names'),
        },
      },
    )
    .put(
      '/persons/:person_id/additional-permissions',
      async ({ org, params, body, request, set }) => {
        const id = parsePersonId(params.person_id);
        const ifMatch = ifMatchOf(request);
        const names = await consistentWrite(request, ctx.headers, () =>
          assignments.setAdditionalPermissions(org.id, id, body.permissions, ifMatch),
        );
        set.headers.etag = await namesEtag(names);
        set.status = 204;
      },
      {
        apiKey: true,
        params: PersonIdParams,
        parse: 'json',
        transform: refuseArrayBody,
        body: PersonPermissionsSchema,
        headers,
        detail: {
          ...detail(
            'PutPersonsPersonIdPermissions',
            "Set a person's additional permissions",
            `The person holds exactly these additional permissions afterwards (at most ${MAX_LIST}; duplicates ignored; [] revokes them all). Every permission must exist: 400 naming those that do not. With If-Match, 412 and nothing written unless it names their current state; the 204 carries the new ETag. Emits PermissionsSetToPerson_v1 and its _InRegion_v1 twin (the person's region) when they change.`,
          ),
          responses: setResponses('permissions'),
        },
      },
    )
    .get(
      '/persons/:person_id/permissions',
      async ({ org, params }) =>
        ok(await assignments.effectivePermissions(org.id, parsePersonId(params.person_id))),
      {
        apiKey: true,
        params: PersonIdParams,
        response: { 200: Names, ...errorResponses },
        detail: detail(
          'GetPersonsPersonIdPermissions',
          "A person's effective permissions",
          "The permissions of the person's roles and its additional permissions, sorted, without repeats.",
        ),
      },
    );
}
