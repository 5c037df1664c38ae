import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import type { EventBus } from '../../../core/ports/event-bus.ts';
import type { Transaction } from '../../../core/ports/storage.ts';
import { endedSessionMessage, SESSION_ENDED_TOPIC } from './ended-relay.ts';
import type { EndedSession } from './store.ts';

export interface SessionEndingDeps {
  directory: Pick<PersonDirectory, 'get'>;
  events: Pick<EventPublisher, 'publish'>;
  /**
   * Where ended sessions with clients are queued for their back-channel logout notices (the relay
   * turns them into notices); absent: no back-channel logout, as in tests of the endings alone.
   */
  bus?: Pick<EventBus, 'publish'> | undefined;
}

/** How a session ended, for its event. */
export interface EndingContext {
  /** With `tx`, the events and the notices' message commit with the deletion, or not at all. */
  tx?: Transaction | undefined;
  /**
   * The request that ended it: a logout from the browser (its browser metadata too), an API call (its
   * analytics only: the browser is the session's, not the caller's); absent for the sweeper and hooks.
   */
  request?: Pick<RequestContext, 'analytics'> & Partial<Pick<RequestContext, 'browser'>>;
}

/**
 * What follows the end of sign-in sessions, however they ended (a logout, the sessions API, a
 * lifetime, the person disabled, deleted or reset): PersonLoggedOut_v1 for each session whose person
 * still exists, and, for a session that served clients, a message on the bus from which the relay
 * sends a back-channel logout notice to each of them that takes one. Both in `tx` when given: nothing
 * here reads outside it (a client is looked up by the relay, after the commit), so it may run inside
 * another plugin's transaction (a hook) on PGlite's single connection too.
 *
 * @example
 * const finish = sessionEnding({ directory, events: ctx.events, bus: ctx.bus });
 * await storage.transaction(async (tx) => finish(await sessions.endAll(orgId, personId, tx), { tx }));
 */
export function sessionEnding(deps: SessionEndingDeps) {
  const { directory, events, bus } = deps;

  return async function finish(ended: readonly EndedSession[], o: EndingContext = {}): Promise<void> {
    if (!ended.length) return;
    const tx = o.tx ? { tx: o.tx } : undefined;
    for (const session of ended) {
      const person = await directory.get(session.orgId, session.personId, tx);
      // A person deleted already has no region to report: the clients are still told.
      if (person)
        await events.publish(
          session.orgId,
          'PersonLoggedOut_v1',
          {
            analytics_metadata: o.request
              ? analyticsMetadata(o.request.analytics)
              : { analytics_correlation_id: crypto.randomUUID(), client_ip_address: '0.0.0.0' },
            // The browser whose session it was: the one asking, else what it said at the sign-in.
            browser_metadata: o.request?.browser ?? {
              user_agent: session.userAgent ?? '',
              window_location: '',
              service_sdk_version: '',
            },
            person_id: person.personId,
            region: person.region,
          },
          tx,
        );
    }
    const served = ended.filter((s) => s.clients.length > 0);
    if (bus && served.length) await bus.publish(SESSION_ENDED_TOPIC, served.map(endedSessionMessage), tx);
  };
}

export type SessionEnding = ReturnType<typeof sessionEnding>;
