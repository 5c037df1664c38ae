import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import type { Transaction } from '../../../core/ports/storage.ts';
import type { BackchannelLogout } from '../logout/backchannel-logout.ts';
import type { LogoutNotice } from '../logout/backchannel-notice.ts';
import type { EndedSession } from './store.ts';

export interface SessionEndingDeps {
  server: Pick<OAuth2Server, 'client'>;
  directory: Pick<PersonDirectory, 'get'>;
  events: Pick<EventPublisher, 'publish'>;
  /** Absent: no back-channel logout in this deployment, and no notice is sent. */
  backchannel?: Pick<BackchannelLogout, 'send'> | undefined;
}

/** How a session ended, for its event: the browser's request when it asked, else nobody's. */
export interface EndingContext {
  /** With `tx`, the events and notices commit with the deletion, or not at all. */
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
 * still exists, and a back-channel logout notice for each client a session served that takes them.
 * Give it what the store's `end`, `endAll` or `endExpired` answered, in their transaction when there
 * was one.
 *
 * @example
 * const finish = sessionEnding({ server, directory, events: ctx.events, backchannel });
 * await storage.transaction(async (tx) => finish(await sessions.endAll(orgId, personId, tx), { tx }));
 */
export function sessionEnding(deps: SessionEndingDeps) {
  const { server, directory, events, backchannel } = deps;

  async function noticesOf(session: EndedSession): Promise<LogoutNotice[]> {
    const notices: LogoutNotice[] = [];
    for (const clientId of new Set(session.clients)) {
      const client = await server.client(clientId);
      // A client deleted since, or (never expected) of another organization, is told nothing.
      if (!client || client.orgId !== session.orgId || !client.backchannelLogoutUri) continue;
      notices.push({
        orgId: session.orgId,
        clientId,
        uri: client.backchannelLogoutUri,
        personId: session.personId,
        sessionId: session.sessionId,
      });
    }
    return notices;
  }

  return async function finish(ended: readonly EndedSession[], o: EndingContext = {}): Promise<void> {
    if (!ended.length) return;
    const tx = o.tx ? { tx: o.tx } : undefined;
    const notices: LogoutNotice[] = [];
    for (const session of ended) {
      const person = await directory.get(session.orgId, session.personId, tx);
      // A person deleted already has no region to report: the notices still go.
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
      if (backchannel) notices.push(...(await noticesOf(session)));
    }
    if (backchannel && notices.length) await backchannel.send(notices, tx);
  };
}

export type SessionEnding = ReturnType<typeof sessionEnding>;
