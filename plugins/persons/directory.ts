import type {
  AnalyticsContext,
  PersonDirectory,
  PersonHandle,
  PersonRecord,
  ProspectivePerson,
} from '../../core/capabilities/person-directory.ts';
import { uuidv7 } from '../../core/ids.ts';
import type { Clock } from '../../core/ports/clock.ts';
import { REGIONS, type Region } from './api/input.ts';
import { normaliseHandle } from './handles.ts';
import type { createSettingsStore } from './settings.ts';
import type { NewPerson } from './store/create-persons.ts';
import type { createPersonLookup } from './store/lookup.ts';
import type { PersonStore } from './store/persons.ts';
import { markVerified } from './verification/mark.ts';

export const isRegion = (s: string): s is Region => (REGIONS as readonly string[]).includes(s);

/** The personDirectory capability: other plugins' reads of persons, and the sign-ups they make. */
export function createDirectory(deps: {
  store: PersonStore;
  lookup: ReturnType<typeof createPersonLookup>;
  settings: ReturnType<typeof createSettingsStore>;
  clock: Clock;
  defaultRegion: Region;
}): PersonDirectory {
  const { store, lookup, settings, clock } = deps;

  const regionOf = (wanted: string | undefined) => {
    if (wanted !== undefined && !isRegion(wanted))
      throw new Error(`persons: region must be one of ${REGIONS.join(', ')} (got ${wanted})`);
    return wanted ?? deps.defaultRegion;
  };

  /** The person as it will be stored, and the call that stores it (once) under the same ID. */
  function prospect(orgId: string, person: NewPerson, analytics: AnalyticsContext): ProspectivePerson {
    const now = clock.now();
    const personId = uuidv7(now);
    let stored: Promise<PersonRecord> | undefined;
    const record: PersonRecord = {
      personId,
      orgId: orgId.toLowerCase(),
      personType: person.personType,
      active: person.active,
      region: person.region,
      handles: person.handles.map((h) => ({ type: h.type, value: h.value, verified: h.verified === true })),
      groups: [],
      createdAt: new Date(now).toISOString(),
    };
    return {
      person: record,
      create() {
        stored ??= store.create(orgId, [{ ...person, personId }], analytics).then(([made]) => made!);
        return stored;
      },
    };
  }

  const anonymous = (region: string): NewPerson => ({
    personType: 'anonymous',
    active: true,
    region,
    handles: [],
    groups: [],
  });
  const withHandles = (region: string, handles: Array<PersonHandle & { verified?: boolean }>): NewPerson => ({
    personType: 'regular',
    active: true,
    region,
    handles: handles.map((h) => ({ ...normaliseHandle(h), verified: h.verified === true })),
    groups: [],
  });

  return {
    // One statement per lookup, concurrent gets batched; an ID that is no UUID names nobody.
    get: (orgId, personId, within) => lookup.get(orgId, personId, within?.tx),
    findByHandle: (orgId, handle) => lookup.findByHandle(orgId, normaliseHandle(handle)),
    normaliseHandle: (handle) => normaliseHandle(handle),
    prospectAnonymous: (orgId, { region, analytics }) =>
      prospect(orgId, anonymous(regionOf(region)), analytics),
    createAnonymous: async (orgId, { region, analytics }) =>
      prospect(orgId, anonymous(regionOf(region)), analytics).create(),
    prospectWithHandles: (orgId, { handles, region, analytics }) =>
      prospect(orgId, withHandles(regionOf(region), handles), analytics),
    createWithHandles: async (orgId, { handles, region, analytics }) =>
      prospect(orgId, withHandles(regionOf(region), handles), analytics).create(),
    markVerified: (orgId, personId, handle, { tx }) =>
      markVerified(tx.db, orgId, personId, normaliseHandle(handle)),
    groupsClaimName: (orgId) => settings.groupsClaimName(orgId),
  };
}
