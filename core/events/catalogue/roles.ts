import * as v from 'valibot';
import { defineEvent } from '../define.ts';
import { identifier, text } from '../formats.ts';
import * as s from '../samples.ts';
import type { SampleContext } from '../types.ts';
import { EventSource } from '../types.ts';

// "Role and permission events". The spec's table has no source column: roles and permissions change
// through the service's API, so these come from Cloud. Each has an `_InRegion` form with the same members
// plus `region`.

const PERMISSIONS = ['orders:read', 'orders:write', 'billing:read', 'billing:admin', 'users:invite'];
const ROLES = ['viewer', 'editor', 'billing-admin', 'support-agent'];
const DESCRIPTIONS = ['Can read orders', 'Can change orders', 'Manages invoices and payment methods'];

const some = (items: readonly string[]) => items.filter(() => Math.random() < 0.5);

/**
 * Declares an event and its `_InRegion` form from one member list and sample.
 *
 * @param numbers the type numbers of the plain and of the `_InRegion` form (undefined where not shown)
 */
function withRegionForm<E extends v.ObjectEntries, const T extends string>(
  type: T,
  numbers: readonly [number | undefined, number | undefined],
  members: E,
  sample: (ctx: SampleContext) => v.InferInput<v.StrictObjectSchema<E, undefined>>,
) {
  return [
    defineEvent({ type, typeNumber: numbers[0], source: EventSource.Cloud, members, sample }),
    defineEvent({
      type: `${type}_InRegion`,
      typeNumber: numbers[1],
      source: EventSource.Cloud,
      members: { ...members, region: identifier() },
      sample: (ctx) => ({ ...sample(ctx), region: s.region() }),
    }),
  ] as const;
}

const permission = { permission_name: identifier(), description: text() };
const permissionSample = () => ({ permission_name: s.pick(PERMISSIONS), description: s.pick(DESCRIPTIONS) });
const role = { role_name: identifier(), description: text(), permissions: v.array(identifier()) };
const roleSample = () => ({
  role_name: s.pick(ROLES),
  description: 'Reads and changes orders on behalf of customers',
  permissions: ['orders:read', ...some(PERMISSIONS.slice(1))],
});

/** Every role and permission event, plain and `_InRegion`. */
export const roleEvents = [
  ...withRegionForm('PermissionCreated', [17, 16], permission, permissionSample),
  ...withRegionForm('PermissionUpdated', [29, 28], permission, permissionSample),
  ...withRegionForm('PermissionDeleted', [19, 18], { permission_name: identifier() }, () => ({
    permission_name: s.pick(PERMISSIONS),
  })),
  ...withRegionForm('RoleCreated', [21, 20], role, roleSample),
  ...withRegionForm('RoleUpdated', [25, 24], role, roleSample),
  ...withRegionForm('RoleDeleted', [23, 22], { role_name: identifier() }, () => ({
    role_name: s.pick(ROLES),
  })),
  // The spec does not show PermissionsSetToPerson's type numbers.
  ...withRegionForm(
    'PermissionsSetToPerson',
    [undefined, undefined],
    {
      new_permissions: v.array(identifier()),
      old_permissions: v.array(identifier()),
      person_id: identifier(),
    },
    (ctx) => ({
      new_permissions: ['orders:read', 'orders:write'],
      old_permissions: ['orders:read'],
      person_id: s.id(ctx),
    }),
  ),
  ...withRegionForm(
    'RolesSetToPerson',
    [27, 26],
    { new_roles: v.array(identifier()), old_roles: v.array(identifier()), person_id: identifier() },
    (ctx) => ({ new_roles: ['viewer', 'editor'], old_roles: ['viewer'], person_id: s.id(ctx) }),
  ),
];
