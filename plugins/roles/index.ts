import { Elysia } from 'elysia';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { beforePersonDeleted } from '../../core/persons/before-person-deleted.ts';
import { definePlugin } from '../../core/plugin.ts';
import { personRoleRoutes } from './api/person-routes.ts';
import { roleRoutes } from './api/routes.ts';
import { migrations } from './migrations/index.ts';
import { createSettingsStore, settingsRoutes } from './settings.ts';
import { createAssignments, forgetPerson } from './store/assignments.ts';
import { createRoleStore } from './store/roles.ts';
import { rolesClaim } from './token-claims.ts';

export { RoleErrors } from './errors.ts';

/**
 * Permissions and roles of an organization, a person's roles and additional permissions, its effective
 * permissions, and the `roles` claim in identity tokens for organizations that turn it on. Every change
 * publishes its event and the `_InRegion_v1` twin. Requires personDirectory (the persons plugin).
 *
 * @example defineService({ plugins: [persons(), tokens(), roles()] })
 */
export const roles = () =>
  definePlugin({
    id: 'roles',
    migrations,
    requires: { persons: personDirectory },
    emits: [
      'PermissionCreated_v1',
      'PermissionCreated_InRegion_v1',
      'PermissionUpdated_v1',
      'PermissionUpdated_InRegion_v1',
      'PermissionDeleted_v1',
      'PermissionDeleted_InRegion_v1',
      'RoleCreated_v1',
      'RoleCreated_InRegion_v1',
      'RoleUpdated_v1',
      'RoleUpdated_InRegion_v1',
      'RoleDeleted_v1',
      'RoleDeleted_InRegion_v1',
      'RolesSetToPerson_v1',
      'RolesSetToPerson_InRegion_v1',
      'PermissionsSetToPerson_v1',
      'PermissionsSetToPerson_InRegion_v1',
    ],
    setup(ctx, { persons }) {
      // Permissions and roles belong to the organization, whose data lives in the deployment's region;
      // a person's assignments are the person's data, and carry the person's region.
      const store = createRoleStore({
        storage: ctx.storage,
        clock: ctx.clock,
        events: ctx.events,
        region: ctx.config.region,
      });
      const assignments = createAssignments({ storage: ctx.storage, events: ctx.events, persons });
      const settings = createSettingsStore(ctx.storage, ctx.clock);
      return {
        routes: new Elysia()
          .use(roleRoutes(ctx, store))
          .use(personRoleRoutes(ctx, assignments))
          .use(settingsRoutes(ctx, settings)),
        attach: [
          rolesClaim(ctx.storage, settings),
          beforePersonDeleted.attach({ run: ({ orgId, personId, tx }) => forgetPerson(tx, orgId, personId) }),
        ],
      };
    },
  });
