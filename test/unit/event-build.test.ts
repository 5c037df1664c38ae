import { describe, expect, it } from 'bun:test';
import * as v from 'valibot';
import { systemClock } from '../../adapters/clock/system.ts';
import { ServiceError } from '../../core/errors.ts';
import { eventCatalogue, eventDefinition } from '../../core/events/catalogue/index.ts';
import { buildEvent, eventMetadataSchema, isServiceEvent } from '../../core/events/metadata.ts';
import { nanoTimestamp } from '../../core/events/timestamp.ts';
import { EventSource, type ServiceEvent } from '../../core/events/types.ts';
import { uuidv7 } from '../../core/ids.ts';
import type { JsonValue } from '../../core/ports/event-bus.ts';
import { manualClock } from '../helpers/clock.ts';
import { backticked, readSpec, section, tables } from '../helpers/spec-tables.ts';

const orgId = uuidv7();
const NANO_RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/;
const METADATA_FIELDS = tables(section(readSpec(), 'Event envelope'))[0]!.rows.map(
  ([f]) => backticked(f!)[0]!,
);

const withoutMetadata = ({ event_metadata: _, ...members }: ServiceEvent) => members;

/** Runs `fn` and returns the ServiceError it throws. */
function refusal(fn: () => unknown): ServiceError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceError) return err;
    throw err;
  }
  throw new Error('expected a ServiceError');
}

describe('samples', () => {
  for (const [name, definition] of eventCatalogue) {
    it(`${name}: a fresh sample is valid against the schema and round-trips through buildEvent`, () => {
      const now = Date.parse('2026-03-04T05:06:07.890Z');
      const sample = definition.sample({ orgId, now });
      expect(v.safeParse(definition.schema, sample).issues).toBeUndefined();
      const event = buildEvent(definition, { orgId, members: sample, isTest: true, clock: systemClock });
      expect(withoutMetadata(event)).toEqual(sample);
      expect(JSON.parse(JSON.stringify(event))).toEqual(event);
      expect(isServiceEvent(event)).toBe(true);
      // Optional members may be left out of a sample; required ones never are.
      for (const m of definition.members) if (!m.optional) expect(Object.keys(sample)).toContain(m.name);
    });
  }

  it('use fresh UUIDs, and the analytics_correlation_id of the context when given', () => {
    const def = eventDefinition('PersonCreated_v1')!;
    const a = def.sample({ orgId, now: Date.now() });
    const b = def.sample({ orgId, now: Date.now() });
    expect(a.person_id).not.toBe(b.person_id);
    const correlation = crypto.randomUUID();
    for (const d of eventCatalogue.values()) {
      const sample = d.sample({ orgId, now: Date.now(), analyticsCorrelationId: correlation });
      if ('analytics_metadata' in sample)
        expect(
          (sample.analytics_metadata as { analytics_correlation_id: string }).analytics_correlation_id,
        ).toBe(correlation);
    }
  });

  it('take their timestamps from the context', () => {
    const now = Date.parse('2031-07-08T09:10:11.000Z');
    const sample = eventDefinition('TokenMinted_v1')!.sample({ orgId, now }) as { issued_at: string };
    expect(sample.issued_at).toBe('2031-07-08T09:10:11.000Z');
  });
});

describe('buildEvent', () => {
  const roleDeleted = eventDefinition('RoleDeleted_v1')!;

  it('fills event_metadata with exactly the spec fields', () => {
    const clock = manualClock(Date.parse('2026-05-06T07:08:09.123Z'));
    const event = buildEvent(roleDeleted, { orgId, members: { role_name: 'editor' }, clock });
    const meta = event.event_metadata;
    expect(Object.keys(meta)).toEqual(METADATA_FIELDS);
    expect(v.safeParse(eventMetadataSchema, meta).issues).toBeUndefined();
    expect(meta).toMatchObject({
      is_test_event: false,
      source: EventSource.Cloud,
      event_type: 'RoleDeleted',
      event_name: 'RoleDeleted_v1',
      event_version: 1,
      organization_id: orgId,
      root_organization_id: orgId,
    });
    expect(meta.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(meta.timestamp.startsWith('2026-05-06T07:08:09.123')).toBe(true);
    expect(meta.timestamp).toMatch(NANO_RFC3339);
    expect(event.role_name).toBe('editor');
  });

  it('names every event <event_type>_v<event_version> and stamps its source', () => {
    for (const d of eventCatalogue.values()) {
      const meta = buildEvent(d, {
        orgId,
        members: d.sample({ orgId, now: Date.now() }),
        clock: systemClock,
      }).event_metadata;
      expect(meta.event_name).toBe(`${meta.event_type}_v${meta.event_version}`);
      expect(meta.event_name).toBe(d.name);
      expect(meta.source).toBe(d.source);
    }
  });

  it('marks test events and keeps a given event_id', () => {
    const eventId = uuidv7();
    const event = buildEvent(roleDeleted, {
      orgId,
      members: { role_name: 'editor' },
      clock: systemClock,
      isTest: true,
      eventId,
    });
    expect(event.event_metadata.is_test_event).toBe(true);
    expect(event.event_metadata.event_id).toBe(eventId);
  });

  it('stamps 10,000 consecutive events with nanosecond timestamps that never go backwards', () => {
    const stamps: string[] = [];
    for (let i = 0; i < 10_000; i++)
      stamps.push(
        buildEvent(roleDeleted, { orgId, members: { role_name: 'editor' }, clock: systemClock })
          .event_metadata.timestamp,
      );
    expect(stamps.filter((s) => !NANO_RFC3339.test(s))).toEqual([]);
    // Strings of one fixed width compare as the instants they name.
    expect(stamps.findIndex((s, i) => i > 0 && s <= stamps[i - 1]!)).toBe(-1);
  });

  it('keeps timestamps increasing while the clock stands still or steps back', () => {
    const clock = manualClock(Date.parse('2026-01-01T00:00:00.000Z'));
    const stamps = [nanoTimestamp(clock), nanoTimestamp(clock)];
    clock.advance(-5_000);
    stamps.push(nanoTimestamp(clock), nanoTimestamp(clock));
    clock.advance(10_000);
    stamps.push(nanoTimestamp(clock));
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]! > stamps[i - 1]!).toBe(true);
    expect(stamps[0]!.startsWith('2026-01-01T00:00:00.000')).toBe(true);
    expect(stamps[4]!.startsWith('2026-01-01T00:00:05.000')).toBe(true);
  });

  it('refuses bad members with a 400 naming the event, each member and the rule', () => {
    const err = refusal(() =>
      buildEvent(eventDefinition('PersonCreated_v1')!, {
        orgId,
        clock: systemClock,
        members: {
          analytics_metadata: { analytics_correlation_id: 'not-a-uuid', client_ip_address: '999.1.2.3' },
          region: 'us-iowa',
          handles: [{ type: 7, value: 'ada@example.com' }],
          gdpr_consents: [],
          favourite_colour: 'blue',
        },
      }),
    );
    expect(err).toMatchObject({ status: 400 });
    expect(err.code).toBe('INVALID_EVENT_PAYLOAD');
    for (const part of [
      'PersonCreated_v1.analytics_metadata.analytics_correlation_id: must be a UUID',
      'PersonCreated_v1.analytics_metadata.client_ip_address: must be an IPv4 or IPv6 address',
      'PersonCreated_v1.person_id: required',
      'PersonCreated_v1.handles[0].type: must be a PersonHandleType number',
      'PersonCreated_v1.favourite_colour: unknown member',
    ])
      expect(err.message).toContain(part);
  });

  it('refuses timestamps that are not RFC 3339 or name no real day, and wrong numbers', () => {
    const tokenMinted = eventDefinition('TokenMinted_v1')!;
    const good = tokenMinted.sample({ orgId, now: Date.now() });
    const cases: Array<[Record<string, JsonValue>, string]> = [
      [
        { ...good, issued_at: '2026-02-30T00:00:00Z' },
        'TokenMinted_v1.issued_at: must be an RFC 3339 timestamp',
      ],
      [
        { ...good, expires_at: '2026-01-01 00:00:00Z' },
        'TokenMinted_v1.expires_at: must be an RFC 3339 timestamp',
      ],
      [{ ...good, mint_token_api: 'yes' }, 'TokenMinted_v1.mint_token_api: Invalid type'],
    ];
    for (const [members, message] of cases)
      expect(
        refusal(() => buildEvent(tokenMinted, { orgId, members, clock: systemClock })).message,
      ).toContain(message);
    const handled = eventDefinition('GateRequestHandled_v1')!;
    const sample = handled.sample({ orgId, now: Date.now() }) as { http_request_metadata: object };
    const members = {
      ...sample,
      http_request_metadata: { ...sample.http_request_metadata, status_code: 2.5 },
    };
    expect(refusal(() => buildEvent(handled, { orgId, members, clock: systemClock })).message).toContain(
      'GateRequestHandled_v1.http_request_metadata.status_code: must be an int32',
    );
  });

  it('refuses an event_id that is not a UUID', () => {
    const err = refusal(() =>
      buildEvent(roleDeleted, { orgId, members: { role_name: 'x' }, clock: systemClock, eventId: 'evt-1' }),
    );
    expect([err.status, err.code]).toEqual([400, 'INVALID_EVENT_ID']);
  });
});
