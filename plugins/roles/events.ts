import type { EventMembers, EventPublisher } from '../../core/events/types.ts';
import type { Transaction } from '../../core/ports/storage.ts';

/** The role and permission events: each has an `_InRegion` twin with the same members plus `region`. */
type Twinned =
  | 'PermissionCreated'
  | 'PermissionUpdated'
  | 'PermissionDeleted'
  | 'RoleCreated'
  | 'RoleUpdated'
  | 'RoleDeleted'
  | 'RolesSetToPerson'
  | 'PermissionsSetToPerson';

/**
 * Publishes an event and its `_InRegion_v1` twin in the write's transaction: both or neither reach the
 * webhooks, and only once the write committed.
 */
export async function publishTwins<T extends Twinned>(
  events: EventPublisher,
  tx: Transaction,
  orgId: string,
  type: T,
  members: EventMembers<`${T}_v1`>,
  region: string,
): Promise<void> {
  await events.publish(orgId, `${type}_v1`, members, { tx });
  // The catalogue declares each twin as the plain event's members plus `region` (withRegionForm), which
  // the type system cannot follow through a generic name: the publisher checks it against the schema.
  await events.publishByName(orgId, `${type}_InRegion_v1`, { ...members, region }, { tx });
}
