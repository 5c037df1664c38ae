import { describe, expect, it } from 'bun:test';
import type { EventMembers, EventName, EventPublisher } from '../../core/events/types.ts';

// These lines are checked by `tsc` (npm run check): each @ts-expect-error must meet an error, so a
// publisher that accepted a wrong name or member would fail the type check.
const typed = (events: EventPublisher, orgId: string) => [
  events.publish(orgId, 'RoleDeleted_v1', { role_name: 'editor' }),
  // @ts-expect-error: not an event of the catalogue
  events.publish(orgId, 'RoleDeletedV1', { role_name: 'editor' }),
  // @ts-expect-error: RoleDeleted_v1 has no member role
  events.publish(orgId, 'RoleDeleted_v1', { role: 'editor' }),
  // @ts-expect-error: role_name is a string
  events.publish(orgId, 'RoleDeleted_v1', { role_name: 7 }),
  // @ts-expect-error: person_id is missing
  events.publish(orgId, 'RolesSetToPerson_v1', { new_roles: [], old_roles: [] }),
  events.publish(orgId, 'RolesSetToPerson_InRegion_v1', {
    new_roles: ['a'],
    old_roles: [],
    person_id: 'pid:1',
    region: 'us-iowa',
  }),
];

describe('typed events', () => {
  it('names every catalogue event in EventName, with its members in EventMembers', () => {
    const name: EventName = 'PersonCreated_v1';
    const members: EventMembers<'RoleDeleted_v1'> = { role_name: 'x' };
    expect([name, members.role_name, typeof typed]).toEqual(['PersonCreated_v1', 'x', 'function']);
  });
});
