import type { Env } from '../../../core/config.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import { ack, type Delivered } from '../../../core/ports/event-bus.ts';
import { edge } from '../../../plugins/edge/index.ts';
import { persons } from '../../../plugins/persons/index.ts';
import { sdk } from '../../../plugins/sdk/index.ts';
import { tokens } from '../../../plugins/tokens/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type CallOptions, startTestService } from '../../helpers/service.ts';

export const APP = 'https://app.example.com';

/**
 * The persons, tokens, sdk and edge plugins in process on PGlite (requests through `app.handle`, the
 * client address given as `peer`), with every event published recorded from the bus.
 */
export async function sdkService(options: { env?: Env } = {}) {
  const t = await startTestService({
    ...(options.env ? { env: options.env } : {}),
    definition: { plugins: [persons(), tokens(), sdk(), edge()] },
  });
  const events: ServiceEvent[] = [];
  const sub = t.service.ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, async (m: Delivered<ServiceEvent>) => {
    events.push(m.payload);
    return ack();
  });
  await expectStatus(
    await t.call('PUT', '/organizations/allowed-origins', { body: { allowed_origins: [APP] } }),
    200,
  );

  /** A person of the organization (or of `o`'s) and a token minted for it. */
  async function personWithToken(o: CallOptions = {}, region = 'us-iowa') {
    const made = await t.call('POST', '/persons', {
      ...o,
      body: { handles: [{ type: 'username', value: `p-${crypto.randomUUID().slice(0, 8)}` }], region },
    });
    await expectStatus(made, 201);
    const personId: string = made.json.result.person_id;
    const minted = await t.call('POST', `/persons/${personId}/mint-token`, { ...o, body: {} });
    await expectStatus(minted, 201);
    return { personId, token: minted.json.result as string };
  }

  /** POST /sdk/events as an end user's browser: no API key. */
  const sdkEvents = (body: unknown, o: CallOptions = {}) =>
    t.call('POST', '/sdk/events', { key: null, ...(body === undefined ? {} : { body }), ...o });

  /** The events of that name published so far, after the bus has had `ms` to hand them over. */
  async function published(name: string, ms = 300): Promise<ServiceEvent[]> {
    await Bun.sleep(ms);
    return events.filter((e) => e.event_metadata.event_name === name);
  }

  return {
    ...t,
    events,
    personWithToken,
    sdkEvents,
    published,
    stop: async () => {
      await sub.stop();
      await t.stop();
    },
  };
}

export type SdkService = Awaited<ReturnType<typeof sdkService>>;
