import {
  type PersonDirectory,
  type PersonRecord,
  personDirectory,
} from '../../core/capabilities/person-directory.ts';
import { definePlugin, type ServiceDefinition } from '../../core/plugin.ts';

/** The in-memory persons of the stub, by organization then person ID; tests add to it directly. */
export interface PersonsStubState {
  persons: Map<string, PersonRecord>;
  groupsClaim: Map<string, string>;
}

/**
 * A stand-in for the persons plugin while it is written in parallel: provides `personDirectory` from an
 * in-memory map. Every test that needs persons gets them through `personsProvider()` (below), so the
 * switch to the real plugin happens in one place.
 */
export function personsStubPlugin(state: PersonsStubState) {
  const key = (orgId: string, personId: string) => `${orgId}/${personId}`;
  const directory: PersonDirectory = {
    get: async (orgId, personId) => state.persons.get(key(orgId, personId)),
    findByHandle: async (orgId, handle) =>
      [...state.persons.values()].find(
        (p) => p.orgId === orgId && p.handles.some((h) => h.type === handle.type && h.value === handle.value),
      ),
    normaliseHandle: (handle) => handle,
    createAnonymous: async (orgId, options) => {
      const person: PersonRecord = {
        personId: crypto.randomUUID(),
        orgId,
        personType: 'anonymous',
        active: true,
        region: options.region ?? 'us-iowa',
        handles: [],
        groups: [],
        createdAt: new Date().toISOString(),
      };
      state.persons.set(key(orgId, person.personId), person);
      return person;
    },
    groupsClaimName: async (orgId) => state.groupsClaim.get(orgId) ?? 'groups',
  };
  return definePlugin({
    id: 'persons-stub',
    provides: { personDirectory },
    setup: () => ({ provide: { personDirectory: directory } }),
  });
}

/**
 * The persons provider tests use, and how they add a person. Today the stub; after the merge, the real
 * persons plugin (adding persons through its routes).
 */
export function personsProvider(): {
  plugin: ServiceDefinition['plugins'][number];
  addPerson(orgId: string, person?: Partial<PersonRecord>): PersonRecord;
  setGroupsClaim(orgId: string, name: string): void;
} {
  const state: PersonsStubState = { persons: new Map(), groupsClaim: new Map() };
  return {
    plugin: personsStubPlugin(state),
    addPerson(orgId, person = {}) {
      const record: PersonRecord = {
        personId: crypto.randomUUID(),
        orgId,
        personType: 'regular',
        active: true,
        region: 'us-iowa',
        handles: [{ type: 'email_address', value: 'ada@example.com' }],
        groups: [],
        createdAt: new Date().toISOString(),
        ...person,
      };
      state.persons.set(`${orgId}/${record.personId}`, record);
      return record;
    },
    setGroupsClaim: (orgId, name) => void state.groupsClaim.set(orgId, name),
  };
}
