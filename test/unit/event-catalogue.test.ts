import { describe, expect, it } from 'bun:test';
import type * as v from 'valibot';
import { gatePlugin, gateRoundTrip, gateVersion } from '../../core/events/catalogue/gate.ts';
import { eventCatalogue } from '../../core/events/catalogue/index.ts';
import { eventMetadataSchema } from '../../core/events/metadata.ts';
import { PasswordChangeInitiator, PersonHandleType, SHARED_TYPES } from '../../core/events/shared-types.ts';
import { ACCEPTED_TRIGGER_NAMES, acceptedTriggerName } from '../../core/events/trigger-names.ts';
import { EventSource, type EventSourceNumber } from '../../core/events/types.ts';
import {
  backticked,
  enumValues,
  membersAfter,
  parenthesisAfter,
  parseMembers,
  readSourceSpec,
  readSpec,
  SPEC_SOURCE,
  type SpecMember,
  section,
  tables,
  withoutParens,
} from '../helpers/spec-tables.ts';

const spec = readSpec();
/** The shared types that are enums, by the spec's name. */
const ENUMS = { PasswordChangeInitiator } as const;
const entriesOf = (schema: v.ObjectSchema<v.ObjectEntries, undefined> | { entries: v.ObjectEntries }) =>
  Object.entries(schema.entries).map(([name, s]) => ({ name, optional: s.type === 'optional' }));

describe('the committed copy of the spec', () => {
  it('equals ../shared/spec/identity-service-interface.md when that file is present', () => {
    const source = readSourceSpec();
    if (source === undefined) return; // a clone without ../shared: the committed copy is all there is
    expect(spec === source, `docs/spec/ is stale: copy ${SPEC_SOURCE} again`).toBe(true);
  });
});

describe('the event catalogue against the spec', () => {
  it('has every event type of the numbers table with its number, and no other', () => {
    const text = section(spec, 'Event types (unversioned) and their numbers');
    const [numbers] = tables(text);
    const listed = new Map(numbers!.rows.map(([n, t]) => [backticked(t!)[0]!, Number(n)]));
    listed.delete('EventType_UNSPECIFIED');
    // "The type number of `PermissionsSetToPerson` and its `_InRegion` form: not shown."
    const notShown = /^The type number of (.*): not shown\.$/m.exec(text)![1]!;
    const unnumbered: string[] = [];
    for (const t of backticked(notShown)) unnumbered.push(t.startsWith('_') ? `${unnumbered.at(-1)}${t}` : t);
    expect(unnumbered).toEqual(['PermissionsSetToPerson', 'PermissionsSetToPerson_InRegion']);

    const byType = new Map([...eventCatalogue.values()].map((d) => [d.type, d.typeNumber]));
    expect(byType.size).toBe(eventCatalogue.size); // one version of each type so far
    expect([...byType.keys()].sort()).toEqual([...listed.keys(), ...unnumbered].sort());
    for (const [type, n] of listed) expect({ type, n: byType.get(type) }).toEqual({ type, n });
    for (const type of unnumbered) expect({ type, n: byType.get(type) }).toEqual({ type, n: undefined });
  });

  it('names every event <type>_v<version>', () => {
    for (const [name, d] of eventCatalogue) {
      expect(name).toBe(`${d.type}_v${d.version}`);
      expect(d.name).toBe(name);
    }
  });

  it('accepts exactly the spec list of trigger names, each resolving to a triggerable entry', () => {
    const text = section(spec, 'Trigger names accepted for event triggers');
    const list = backticked(withoutParens(text.trim().split('\n\n')[0]!));
    expect([...ACCEPTED_TRIGGER_NAMES] as string[]).toEqual(list);
    for (const name of list) {
      const canonical = acceptedTriggerName(name);
      expect({ name, triggerable: canonical && eventCatalogue.get(canonical)?.triggerable }).toEqual({
        name,
        triggerable: true,
      });
    }
    // Every entry is triggerable exactly when one of the accepted names resolves to it.
    const resolved = new Set(list.map((n) => acceptedTriggerName(n)));
    for (const [name, d] of eventCatalogue)
      expect({ name, t: d.triggerable }).toEqual({ name, t: resolved.has(name) });
  });

  describe('the payload tables', () => {
    const payloads = section(spec, 'Event payloads');
    const groups = payloads.split(/\n(?=\*\*)/).filter((g) => g.startsWith('**'));
    const listed = new Set<string>();

    for (const group of groups) {
      const [, title, note] = /^\*\*(.+?)\*\*(.*)$/m.exec(group)!;
      const inRegionAddsRegion =
        /Each event with a `_InRegion` form has the same members as its plain form plus `region`/.test(group);
      for (const table of tables(group)) {
        const col = (name: string) => table.header.indexOf(name);
        for (const row of table.rows) {
          const names = backticked(row[col('Event')]!);
          const members = parseMembers(row[col('Members')]!);
          const sources = expectedSources(col('Source') >= 0 ? row[col('Source')]! : undefined, note!);
          for (const name of names) {
            listed.add(name);
            it(`${title}: ${name} has exactly the members, optionality and source the spec gives`, () => {
              const d = eventCatalogue.get(name);
              expect(d, `${name} is missing from the catalogue`).toBeDefined();
              const want: SpecMember[] =
                inRegionAddsRegion && name.endsWith('_InRegion_v1')
                  ? [...members, { name: 'region', optional: false }]
                  : members;
              expect(d!.members).toEqual(want);
              expect(sources).toContain(d!.source);
              if (title === 'Cloud-provider events') expect(d!.triggerable).toBe(false);
            });
          }
        }
      }
    }

    it('lists every catalogue entry, and the catalogue has no other', () => {
      expect([...eventCatalogue.keys()].sort()).toEqual([...listed].sort());
    });

    it('gives the nested objects of the Gate events their members', () => {
      const gate = tables(groups.find((g) => g.startsWith('**Gate events**'))!)[0]!;
      const cell = (name: string) => gate.rows.find((r) => r[0] === `\`${name}\``)![1]!;
      const version = parenthesisAfter(cell('GateServerStarted_v1'), 'version').replace(/^object:\s*/, '');
      expect(entriesOf(gateVersion)).toEqual(parseMembers(version));
      const handled = cell('GateRequestHandled_v1');
      expect(entriesOf(gatePlugin)).toEqual(membersAfter(handled, 'Each plugin:'));
      const roundTrip = backticked(
        parenthesisAfter(handled.slice(handled.indexOf('Each plugin:')), 'round_trips'),
      );
      expect(Object.keys(gateRoundTrip.entries)).toEqual(roundTrip);
    });
  });

  it('has a schema for every shared type with exactly its fields, and the enums with their numbers', () => {
    const [shared] = tables(section(spec, 'Shared types'));
    const types = shared!.rows.map(([t]) => backticked(t!)[0]!);
    expect(Object.keys(SHARED_TYPES).sort()).toEqual([...types].sort());
    for (const [cellType, fields] of shared!.rows) {
      const type = backticked(cellType!)[0]! as keyof typeof SHARED_TYPES;
      const schema = SHARED_TYPES[type];
      if (fields!.startsWith('enum:')) {
        expect(schema.type).toBe('picklist');
        expect(enumValues(fields!)).toEqual(ENUMS[type as keyof typeof ENUMS]);
        expect('options' in schema ? ([...schema.options] as number[]) : undefined).toEqual(
          Object.values(enumValues(fields!)),
        );
        continue;
      }
      expect('entries' in schema).toBe(true);
      expect({ type, fields: entriesOf(schema as { entries: v.ObjectEntries }) }).toEqual({
        type,
        fields: parseMembers(fields!),
      });
    }
    const handleType = shared!.rows.find(([t]) => t === '`PersonHandle`')![1]!;
    expect(enumValues(handleType)).toEqual(PersonHandleType);
    expect([...SHARED_TYPES.PersonHandle.entries.type.options]).toEqual(Object.values(PersonHandleType));
  });

  it('fills event_metadata with exactly the envelope table fields, and EventSource with its numbers', () => {
    const envelope = section(spec, 'Event envelope');
    const [table] = tables(envelope);
    const fields = table!.rows.map(([f, , notes]) => ({
      name: backticked(f!)[0]!,
      optional: /Not present in all events/.test(notes!),
    }));
    expect(entriesOf(eventMetadataSchema)).toEqual(fields);
    const source = table!.rows.find(([f]) => f === '`source`')!;
    expect(enumValues(source[2]!)).toEqual(EventSource);
  });
});

/**
 * The sources a payload row allows: its Source column (`SDK or Cloud` allows either), else its group's
 * "(source X)" note, else Cloud: role, permission and cloud-provider events are made by the service.
 * The spec's "edge function" has no EventSource value; the catalogue stamps Cloud (see authentication.ts).
 */
function expectedSources(column: string | undefined, note: string): EventSourceNumber[] {
  const named = column ?? /\(source (\w+)\)/.exec(note)?.[1];
  if (named === undefined) return [EventSource.Cloud];
  return named.split(/\s+or\s+/).map((s) => {
    if (s === 'edge function') return EventSource.Cloud;
    const n = EventSource[s as keyof typeof EventSource];
    if (n === undefined) throw new Error(`unknown source "${s}" in the spec`);
    return n;
  });
}
