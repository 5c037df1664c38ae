import type { EventDefinition } from '../types.ts';
import { catalogueEntries } from './entries.ts';

const all: readonly EventDefinition[] = catalogueEntries;

/**
 * Every event of the spec by its versioned name (`AuthenticationSucceeded_v1`, `MitmAttackDetected_v1`):
 * type, type number, version, source, whether webhooks may subscribe to it, its payload schema and a
 * sample. Names are case-sensitive.
 */
export const eventCatalogue: ReadonlyMap<string, EventDefinition> = new Map(all.map((d) => [d.name, d]));

// Two entries with one name would make the later one win silently: refuse to load instead.
if (eventCatalogue.size !== all.length) {
  const names = all.map((d) => d.name);
  throw new Error(`duplicate event names: ${names.filter((n, i) => names.indexOf(n) !== i).join(', ')}`);
}

/**
 * The catalogue entry of a versioned event name, or undefined for a name the catalogue does not know.
 * Only payload-definition names resolve: for a trigger spelling such as `MitmAttackDetectedV1`, normalise
 * it with `acceptedTriggerName` first.
 *
 * @example eventDefinition('PersonCreated_v1')?.typeNumber // 4
 */
export const eventDefinition = (name: string): EventDefinition | undefined => eventCatalogue.get(name);
