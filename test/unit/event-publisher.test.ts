import { afterEach, beforeEach, describe, expect, it } from 'bun:test';
import { systemClock } from '../../adapters/clock/system.ts';
import { createPgQueueBus } from '../../adapters/pg-queue/index.ts';
import { ServiceError } from '../../core/errors.ts';
import { eventDefinition } from '../../core/events/catalogue/index.ts';
import { buildEvent } from '../../core/events/metadata.ts';
import { createEventPublisher } from '../../core/events/publisher.ts';
import { EVENTS_TOPIC, type EventPublisher } from '../../core/events/types.ts';
import { createLogger } from '../../core/log.ts';
import { ack, type Delivered, type EventBus, type Subscription } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { waitFor } from '../contract/event-bus.contract.ts';
import { freshPglite } from '../helpers/pglite.ts';
import { startTestService } from '../helpers/service.ts';

const log = createLogger('silent');
const orgId = '0195f1a2-0000-7000-8000-000000000001';
const settle = () => new Promise((r) => setTimeout(r, 400));

describe('the event publisher on the pg-queue bus', () => {
  let storage: Storage;
  let bus: EventBus;
  let events: EventPublisher;
  let received: Delivered[];
  let sub: Subscription | undefined;

  const listen = () => {
    sub = bus.consume(EVENTS_TOPIC, async (m) => {
      received.push(m);
      return ack();
    });
  };

  beforeEach(async () => {
    storage = await freshPglite();
    bus = createPgQueueBus({ storage, clock: systemClock, log, pollMs: 50 });
    events = createEventPublisher({ bus, clock: systemClock, log });
    received = [];
  });
  afterEach(async () => {
    await sub?.stop();
    sub = undefined;
    await bus.close();
    await storage.close();
  });

  it('publishes on the events topic with the event_id as message id', async () => {
    listen();
    const event = await events.publish(orgId, 'RoleDeleted_v1', { role_name: 'editor' });
    await waitFor(() => received.length === 1, 10_000, 'the event');
    expect(received[0]!.id).toBe(event.event_metadata.event_id);
    expect(received[0]!.payload as unknown).toEqual(event);
    expect(event.event_metadata).toMatchObject({ organization_id: orgId, is_test_event: false });
  });

  it('publishes test events marked as such', async () => {
    listen();
    const definition = eventDefinition('PersonCreated_v1')!;
    const members = definition.sample({ orgId, now: systemClock.now() });
    const event = await events.publishByName(orgId, definition.name, members, { isTest: true });
    await waitFor(() => received.length === 1, 10_000, 'the test event');
    expect(received[0]!.payload as unknown).toEqual(event);
    expect(event.event_metadata.is_test_event).toBe(true);
  });

  it('delivers nothing from a rolled-back transaction, and the event of a committed one', async () => {
    listen();
    await expect(
      storage.transaction(async (tx) => {
        await events.publish(orgId, 'RoleDeleted_v1', { role_name: 'rolled-back' }, { tx });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const committed = await storage.transaction((tx) =>
      events.publish(orgId, 'RoleDeleted_v1', { role_name: 'committed' }, { tx }),
    );
    await waitFor(() => received.length >= 1, 10_000, 'the committed event');
    await settle();
    expect(received.map((m) => m.id)).toEqual([committed.event_metadata.event_id]);
  });

  it('publishes built events in one call, and a retried publish delivers each once', async () => {
    const definition = eventDefinition('PermissionCreated_v1')!;
    const built = [1, 2, 3].map(() =>
      buildEvent(definition, {
        orgId,
        members: definition.sample({ orgId, now: systemClock.now() }),
        clock: systemClock,
      }),
    );
    await events.publishBuilt(built);
    await events.publishBuilt(built); // a retry after an ambiguous failure
    listen();
    await waitFor(() => received.length >= 3, 10_000, 'three events');
    await settle();
    expect(received.map((m) => m.id).sort()).toEqual(built.map((e) => e.event_metadata.event_id).sort());
  });

  it('refuses an unknown event name and a bad payload with 400, publishing nothing', async () => {
    const unknown = await events.publishByName(orgId, 'PersonCreatedV1', {}).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ServiceError);
    expect(unknown).toMatchObject({ status: 400, code: 'UNKNOWN_EVENT' });
    expect((unknown as Error).message).toContain('"PersonCreatedV1"');
    const invalid = await events.publish(orgId, 'RoleDeleted_v1', { role_name: '' }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ status: 400, code: 'INVALID_EVENT_PAYLOAD' });
    expect((invalid as Error).message).toBe('RoleDeleted_v1.role_name: must not be empty');
    listen();
    await settle();
    expect(received).toEqual([]);
  });
});

describe('the service context', () => {
  it('gives plugins an event publisher on the service bus', async () => {
    const t = await startTestService();
    try {
      const seen: Delivered[] = [];
      const sub = t.service.ctx.bus.consume(EVENTS_TOPIC, async (m) => {
        seen.push(m);
        return ack();
      });
      const event = await t.service.ctx.events.publish(t.org.id, 'PermissionDeleted_v1', {
        permission_name: 'orders:write',
      });
      await waitFor(() => seen.length === 1, 10_000, 'the event');
      await sub.stop();
      expect(seen[0]!.id).toBe(event.event_metadata.event_id);
      expect(event.event_metadata.root_organization_id).toBe(t.org.id);
    } finally {
      await t.stop();
    }
  });
});
