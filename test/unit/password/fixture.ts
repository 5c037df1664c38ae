import type { PersonHandle } from '../../../core/capabilities/person-directory.ts';
import type { Env } from '../../../core/config.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import type { Logger } from '../../../core/log.ts';
import type { PluginDefinition } from '../../../core/plugin.ts';
import { ack, type Delivered } from '../../../core/ports/event-bus.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { identityPlugins } from '../../helpers/identity-service.ts';
import { startTestService } from '../../helpers/service.ts';

/** A service with the password plugin on the real persons and tokens plugins, and every event published. */
export async function passwordService(options: { env?: Env; extra?: PluginDefinition[]; log?: Logger } = {}) {
  const t = await startTestService({
    env: { TRUSTED_PROXY_HOPS: '1', ...options.env },
    definition: { plugins: [...identityPlugins(), ...(options.extra ?? [])] },
    ...(options.log ? { log: options.log } : {}),
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
  const signIn = (body: unknown, headers: Record<string, string> = {}) =>
    t.call('POST', '/authenticate/password', { body, key: null, headers });
  /** Creates a person through POST /persons. */
  async function addPerson(handles: PersonHandle[], extra: { active?: boolean } = {}) {
    const res = await t.call('POST', '/persons', { body: { handles, ...extra } });
    await expectStatus(res, 201);
    return { personId: res.json.result.person_id as string };
  }
  /** POST /token/validate's answer for a token. */
  const validate = async (token: string) =>
    (await t.call('POST', '/token/validate', { body: { token } })).json.result;
  const setPassword = (personId: string, body: unknown) =>
    t.call('PUT', `/persons/${personId}/credentials/password`, { body });
  return {
    ...t,
    addPerson,
    validate,
    events,
    eventsNamed,
    signIn,
    setPassword,
    stop: async () => {
      await sub.stop();
      await t.stop();
    },
  };
}
