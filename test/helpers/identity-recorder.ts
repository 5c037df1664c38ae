import type { Env } from '../../core/config.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../core/events/types.ts';
import type { PluginDefinition } from '../../core/plugin.ts';
import { ack } from '../../core/ports/event-bus.ts';
import type { TokenDraft } from '../../core/tokens/before-token-issued.ts';
import { password } from '../../plugins/password/index.ts';
import { persons } from '../../plugins/persons/index.ts';
import { tokens } from '../../plugins/tokens/index.ts';
import { startTestService } from './service.ts';
import { type HookProbe, hookPlugin } from './tokens-service.ts';

/**
 * The real persons, tokens and password plugins (argon2id at its cheapest), with every event they
 * publish and every beforeTokenIssued draft (`hook` decides on them). With `listen`, also served on a loopback port by Bun.serve
 * as entry/bun.ts serves it: the socket's address handed to the front door.
 */
export async function startRecordingIdentityService(
  options: { env?: Env; extra?: PluginDefinition[]; listen?: boolean } = {},
) {
  const drafts: TokenDraft[] = [];
  // Records every draft beforeTokenIssued is called with, as the token_minted hook sees it; allows by default.
  const hook: HookProbe = { seen: drafts, answer: () => undefined };
  const t = await startTestService({
    env: { PASSWORD_ARGON2_MEMORY_KIB: '1024', PASSWORD_ARGON2_ITERATIONS: '1', ...options.env },
    definition: {
      plugins: [
        persons(),
        tokens(),
        password(),
        hookPlugin('draft-recorder', hook),
        ...(options.extra ?? []),
      ],
    },
  });
  const events: ServiceEvent[] = [];
  const sub = t.service.ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, async (m) => {
    events.push(m.payload);
    return ack();
  });
  const server = options.listen
    ? Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch: (request, s) => t.service.fetchFrom(request, s.requestIP(request)?.address),
      })
    : undefined;
  /** The first event of that name about the person, waiting up to 5 s for it. */
  async function eventFor(name: string, personId: string): Promise<ServiceEvent> {
    const pick = () => events.find((e) => e.event_metadata.event_name === name && e.person_id === personId);
    const deadline = Date.now() + 5000;
    while (!pick() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const found = pick();
    if (!found) throw new Error(`no ${name} for ${personId} within 5 s`);
    return found;
  }
  /** A request to the served port with the organization's credentials (or none with `key: null`). */
  function request(
    method: string,
    path: string,
    o: { body?: unknown; headers?: Record<string, string>; key?: null } = {},
  ) {
    if (!server) throw new Error('startRecordingIdentityService: request() needs listen: true');
    const headers = new Headers(o.headers);
    headers.set(t.names.orgId, t.org.id);
    if (o.key !== null) headers.set(t.names.apiKey, t.apiKey);
    if (o.body !== undefined) headers.set('content-type', 'application/json');
    return fetch(`http://127.0.0.1:${server.port}${path}`, {
      method,
      headers,
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
    });
  }
  return {
    ...t,
    drafts,
    /** What beforeTokenIssued answers: set `answer` to add claims or block (throw a 403 ServiceError). */
    hook,
    events,
    eventFor,
    request,
    async stop() {
      server?.stop(true);
      await sub.stop();
      await t.stop();
    },
  };
}

export type RecordingIdentityService = Awaited<ReturnType<typeof startRecordingIdentityService>>;
