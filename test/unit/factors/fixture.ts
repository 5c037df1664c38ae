import type { PersonHandle } from '../../../core/capabilities/person-directory.ts';
import type { Env } from '../../../core/config.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import type { PluginDefinition } from '../../../core/plugin.ts';
import { ack, type Delivered } from '../../../core/ports/event-bus.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { identityPlugins } from '../../helpers/identity-service.ts';
import { type CallOptions, startTestService } from '../../helpers/service.ts';

export const PASSWORD = 'correct horse battery staple';

/**
 * The default identity plugins (persons, tokens, password, factors) and `extra` ones, on in-memory PGlite
 * with a manual clock, every event published kept. Client addresses come from X-Forwarded-For.
 */
export async function factorsService(o: { env?: Env; extra?: PluginDefinition[] } = {}) {
  const clock = manualClock(Date.now());
  const t = await startTestService({
    env: { TRUSTED_PROXY_HOPS: '1', ...o.env },
    definition: { plugins: [...identityPlugins(), ...(o.extra ?? [])] },
    clock,
  });
  const events: ServiceEvent[] = [];
  const sub = t.service.ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, async (m: Delivered<ServiceEvent>) => {
    events.push(m.payload);
    return ack();
  });
  /** The events of that name seen so far, waiting up to 5 s for at least `count`. */
  async function eventsNamed(name: string, count = 1): Promise<ServiceEvent[]> {
    const deadline = Date.now() + 5000;
    const pick = () => events.filter((e) => e.event_metadata.event_name === name);
    while (pick().length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return pick();
  }
  /** A second organization, hostile: its own ID and API key. */
  async function otherOrg() {
    const { organization, apiKey } = await t.service.ctx.orgs.create('Hostile');
    return { orgId: organization.id, key: apiKey };
  }
  /** A person made through POST /persons with its password set through the API. */
  async function addPerson(handles: PersonHandle[], o: CallOptions = {}) {
    const res = await t.call('POST', '/persons', { ...o, body: { handles } });
    await expectStatus(res, 201);
    const personId = res.json.result.person_id as string;
    await expectStatus(
      await t.call('PUT', `/persons/${personId}/credentials/password`, {
        ...o,
        body: { password: PASSWORD },
      }),
      204,
    );
    return { personId, handle: handles[0]! };
  }
  const signIn = (handle: PersonHandle, o: CallOptions & { password?: string } = {}) =>
    t.call('POST', '/authenticate/password', {
      ...o,
      key: null,
      body: { handle, password: o.password ?? PASSWORD },
    });
  const mfa = (body: unknown, o: CallOptions = {}) =>
    t.call('POST', '/authenticate/mfa', { ...o, key: null, body });
  const setPolicy = async (body: unknown, o: CallOptions = {}) => {
    const res = await t.call('PUT', '/organizations/authentication-policy', { ...o, body });
    await expectStatus(res, 200);
    return res.json.result;
  };
  /** POST /token/validate's answer. */
  const validate = async (token: string) =>
    (await t.call('POST', '/token/validate', { body: { token } })).json.result;
  return {
    ...t,
    clock,
    events,
    eventsNamed,
    otherOrg,
    addPerson,
    signIn,
    mfa,
    setPolicy,
    validate,
    stop: async () => {
      await sub.stop();
      await t.stop();
    },
  };
}

export type FactorsService = Awaited<ReturnType<typeof factorsService>>;
