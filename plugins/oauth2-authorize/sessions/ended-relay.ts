import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import type { Logger } from '../../../core/log.ts';
import type { Worker } from '../../../core/plugin.ts';
import {
  ack,
  type Delivered,
  drop,
  type EventBus,
  type JsonValue,
  type OutgoingMessage,
  retry,
  type Subscription,
} from '../../../core/ports/event-bus.ts';
import type { BackchannelLogout } from '../logout/backchannel-logout.ts';
import type { LogoutNotice } from '../logout/backchannel-notice.ts';
import type { EndedSession } from './store.ts';

/** The bus topic of ended sessions whose clients the relay tells (back-channel logout). */
export const SESSION_ENDED_TOPIC = 'oauth2-session-ended';

/** An ended session as queued: who, which session, and the clients it served. */
interface EndedMessage {
  org: string;
  person: string;
  session: string;
  clients: string[];
}

/** The bus message of an ended session; its id names the session, which ends once. */
export function endedSessionMessage(s: EndedSession): OutgoingMessage {
  const payload: EndedMessage = {
    org: s.orgId,
    person: s.personId,
    session: s.sessionId,
    clients: [...new Set(s.clients)],
  };
  return { id: `session-ended:${s.sessionId}`, payload: { ...payload } };
}

const isText = (v: JsonValue | undefined): v is string => typeof v === 'string' && v !== '';

function endedOf(payload: JsonValue): EndedMessage | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const { org, person, session, clients } = payload;
  if (!isText(org) || !isText(person) || !isText(session) || !Array.isArray(clients)) return undefined;
  if (!clients.every(isText)) return undefined;
  return { org, person, session, clients };
}

/** A relay that failed (the database or the bus away) tries again after this long. */
const RETRY_MS = 5_000;

/**
 * Turns ended sessions into back-channel logout notices, after their ending committed: for each client
 * the session served that registered a `backchannel_logout_uri` (and is still of its organization), a
 * notice to the durable sender. Ending a session may run inside another plugin's transaction (a person
 * deleted), where no client can be looked up; the ended session is queued in that transaction instead,
 * so the notices are as durable as the ending. At least once: the sender's message IDs name the
 * organization, client and session, so a notice relayed twice is delivered once where the bus can tell.
 */
export function sessionEndedRelay(deps: {
  bus: EventBus;
  server: Pick<OAuth2Server, 'client'>;
  backchannel: Pick<BackchannelLogout, 'send'>;
  log: Logger;
}): Worker {
  const { bus, server, backchannel, log } = deps;

  async function relay(msg: Delivered<JsonValue>) {
    const ended = endedOf(msg.payload);
    if (!ended) return drop('not an ended session this service queued');
    try {
      const notices: LogoutNotice[] = [];
      for (const clientId of ended.clients) {
        const client = await server.client(clientId);
        // A client deleted since, or (never expected) of another organization, is told nothing.
        if (!client || client.orgId !== ended.org || !client.backchannelLogoutUri) continue;
        notices.push({
          orgId: ended.org,
          clientId,
          uri: client.backchannelLogoutUri,
          personId: ended.person,
          sessionId: ended.session,
          issuer: client.issuer,
        });
      }
      await backchannel.send(notices);
      return ack();
    } catch (error) {
      log.warn('relaying an ended session to back-channel logout failed; retrying', {
        org_id: ended.org,
        session_id: ended.session,
        error: String(error),
      });
      return retry(RETRY_MS);
    }
  }

  let subscription: Subscription | undefined;
  return {
    name: 'oauth2-authorize-session-ended-relay',
    start() {
      subscription = bus.consume(SESSION_ENDED_TOPIC, relay);
    },
    async stop() {
      await subscription?.stop();
      subscription = undefined;
    },
  };
}
