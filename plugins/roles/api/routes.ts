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
  routeDetail,
  writeErrorDocs,
} from '../../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { RoleStore } from '../store/roles.ts';
import {
  MAX_LIST,
  NAME_RULE,
  PermissionCreateSchema,
  PermissionPatchSchema,
  parseName,
  RoleCreateSchema,
  RolePatchSchema,
} from './input.ts';

export const TAGS = ['Roles and permissions'];
export const SECURITY = API_KEY_SECURITY;

const PermissionSchema = v.object({ name: v.string(), description: v.string() });
const RoleSchema = v.object({ name: v.string(), description: v.string(), permissions: v.array(v.string()) });
const PermissionParams = v.object({ permission_name: v.string() });
const RoleParams = v.object({ role_name: v.string() });

const deleted = (what: string) => ({
  204: { description: `No content: the ${what} is deleted` },
  400: errorDoc('A name that breaks the rule, or a bad consistency header'),
  401: errorDoc('No API key, or not a valid one'),
  403: errorDoc('A key of another organization'),
  404: errorDoc(`No such ${what} in this organization`),
  ...writeErrorDocs,
});

/** POST, GET /permissions; GET, PATCH, DELETE /permissions/{name}; the same for /roles. */
export function roleRoutes(ctx: ServiceContext, store: RoleStore) {
  const headers = consistencyHeaders(ctx.headers);
  const write = <T>(request: Request, fn: () => Promise<T>) => consistentWrite(request, ctx.headers, fn);
  const detail = routeDetail(TAGS, SECURITY);
  return new Elysia()
    .use(ctx.auth)
    .post(
      '/permissions',
      async ({ org, body, request, set }) => {
        const made = await write(request, () =>
          store.createPermission(org.id, { name: body.name, description: body.description ?? '' }),
        );
        set.status = 201;
        return ok(made);
      },
      {
        apiKey: true,
        parse: 'json',
        transform: refuseArrayBody,
        body: PermissionCreateSchema,
        headers,
        response: {
          201: resultOf(PermissionSchema),
          ...errorResponses,
          409: ErrorEnvelopeSchema,
          ...writeErrorResponses,
        },
        detail: detail(
          'PostPermissions',
          'Create a permission',
          `The name ${NAME_RULE}; 409 when the organization has it already. Emits PermissionCreated_v1 and PermissionCreated_InRegion_v1.`,
        ),
      },
    )
    .get('/permissions', async ({ org }) => ok(await store.listPermissions(org.id)), {
      apiKey: true,
      response: { 200: resultOf(v.array(PermissionSchema)), ...errorResponses },
      detail: detail('GetPermissions', "The organization's permissions", 'Sorted by name.'),
    })
    .get(
      '/permissions/:permission_name',
      async ({ org, params }) =>
        ok(await store.getPermission(org.id, parseName('permission_name', params.permission_name))),
      {
        apiKey: true,
        params: PermissionParams,
        response: { 200: resultOf(PermissionSchema), ...errorResponses },
        detail: detail('GetPermissionsPermissionName', 'Get a permission'),
      },
    )
    .patch(
      '/permissions/:permission_name',
      async ({ org, params, body, request }) => {
        const name = parseName('permission_name', params.permission_name);
        return ok(await write(request, () => store.updatePermission(org.id, name, body)));
      },
      {
        apiKey: true,
        params: PermissionParams,
        parse: 'json',
        transform: refuseArrayBody,
        body: PermissionPatchSchema,
        headers,
        response: { 200: resultOf(PermissionSchema), ...errorResponses, ...writeErrorResponses },
        detail: detail(
          'PatchPermissionsPermissionName',
          "Change a permission's description",
          'Emits PermissionUpdated_v1 and its _InRegion_v1 twin when the description changes.',
        ),
      },
    )
    .delete(
      '/permissions/:permission_name',
      async ({ org, params, request, set }) => {
        const name = parseName('permission_name', params.permission_name);
        await write(request, () => store.deletePermission(org.id, name));
        set.status = 204;
      },
      {
        apiKey: true,
        params: PermissionParams,
        headers,
        detail: {
          ...detail(
            'DeletePermissionsPermissionName',
            'Delete a permission',
            'Removes it from every role and person in the same transaction. Emits PermissionDeleted_v1 and its _InRegion_v1 twin (no RoleUpdated or PermissionsSetToPerson events for the roles and persons that held it).',
          ),
          responses: deleted('permission'),
        },
      },
    )
    .post(
      '/roles',
      async ({ org, body, request, set }) => {
        const made = await write(request, () =>
          store.createRole(org.id, {
            name: body.name,
            description: body.description ?? '',
            permissions: body.permissions,
          }),
        );
        set.status = 201;
        return ok(made);
      },
      {
        apiKey: true,
        parse: 'json',
        transform: refuseArrayBody,
        body: RoleCreateSchema,
        headers,
        response: {
          201: resultOf(RoleSchema),
          ...errorResponses,
          409: ErrorEnvelopeSchema,
          ...writeErrorResponses,
        },
        detail: detail(
          'PostRoles',
          'Create a role',
          `The name ${NAME_RULE}; 409 when the organization has it already. permissions (at most ${MAX_LIST}; duplicates ignored) must all exist: 400 naming those that do not. Emits RoleCreated_v1 and RoleCreated_InRegion_v1.`,
        ),
      },
    )
    .get('/roles', async ({ org }) => ok(await store.listRoles(org.id)), {
      apiKey: true,
      response: { 200: resultOf(v.array(RoleSchema)), ...errorResponses },
      detail: detail(
        'GetRoles',
        "The organization's roles",
        'Sorted by name, each with its permissions sorted.',
      ),
    })
    .get(
      '/roles/:role_name',
      async ({ org, params }) => ok(await store.getRole(org.id, parseName('role_name', params.role_name))),
      {
        apiKey: true,
        params: RoleParams,
        response: { 200: resultOf(RoleSchema), ...errorResponses },
        detail: detail('GetRolesRoleName', 'Get a role'),
      },
    )
    .patch(
      '/roles/:role_name',
      async ({ org, params, body, request }) => {
        const name = parseName('role_name', params.role_name);
        return ok(await write(request, () => store.updateRole(org.id, name, body)));
      },
      {
        apiKey: true,
        params: RoleParams,
        parse: 'json',
        transform: refuseArrayBody,
        body: RolePatchSchema,
        headers,
        response: { 200: resultOf(RoleSchema), ...errorResponses, ...writeErrorResponses },
        detail: detail(
          'PatchRolesRoleName',
          "Change a role's description or permissions",
          'permissions, when given, replaces the list (every one must exist). Emits RoleUpdated_v1 and its _InRegion_v1 twin when something changes.',
        ),
      },
    )
    .delete(
      '/roles/:role_name',
      async ({ org, params, request, set }) => {
        const name = parseName('role_name', params.role_name);
        await write(request, () => store.deleteRole(org.id, name));
        set.status = 204;
      },
      {
        apiKey: true,
        params: RoleParams,
        headers,
        detail: {
          ...detail(
            'DeleteRolesRoleName',
            'Delete a role',
            'Removes it from every person in the same transaction. Emits RoleDeleted_v1 and its _InRegion_v1 twin (no RolesSetToPerson events for the persons that held it).',
          ),
          responses: deleted('role'),
        },
      },
    );
}
